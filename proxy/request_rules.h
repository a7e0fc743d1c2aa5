// What the proxy accepts of a client's request once Beast has parsed its head, and what of it
// goes upstream. Pure (no socket, no libcurl): the Session calls these, and so does the request
// side's fuzz target (tests/fuzz/fuzz_proxy_request.cpp), so both see the same rules.
//
// Framing is RFC 9112's, strictly, as nginx and HAProxy apply it: a message whose length two
// parts of the proxy (or the proxy and the upstream) could read differently is refused, never
// guessed at, and its connection closed.
#pragma once

#include <boost/beast/http/message.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/proxy_settings.h"
#include "core/json_text.h"

struct sockaddr;

namespace curlretry::proxy {

using RequestHead = boost::beast::http::request_header<>;

// An answer the proxy gives itself instead of forwarding; the connection closes after it.
struct Refusal {
  int status;
  std::string error;  // the "error" text of the JSON body
};

// RFC 9112 §6.1/§6.3 and §3.2: Transfer-Encoding must end in `chunked` (400) and carry no other
// coding (501: the proxy decodes none), never beside Content-Length or in HTTP/1.0 (400); an
// HTTP/1.1 request has exactly one Host (400), an HTTP/1.0 one at most one.
std::optional<Refusal> framing_refusal(const RequestHead& head);

// The client's header fields that go upstream: end-to-end ones only (hop-by-hop, Host, framing,
// Expect and Accept-Encoding stay: libcurl frames and negotiates its own hop). Trailer fields are
// never among them: the Session keeps the head as it was before the body.
std::vector<std::pair<std::string, std::string>> end_to_end_headers(const RequestHead& head);

// An HTTP/1.1 request to switch to a WebSocket (RFC 6455 §4.1: `Connection: Upgrade` and
// `Upgrade: websocket`), without a body: carried as a tunnel (proxy/upgrade.h). Any other upgrade
// (h2c) is dropped as a hop-by-hop header and the request runs as HTTP/1.1, retried.
bool websocket_upgrade(const RequestHead& head);

// The path after a route's name (starting with '/' or '?', or empty) with its dot-segments
// removed (RFC 3986 §5.2.4; "%2e" counts as '.'), so that what reaches the upstream stays under the
// route's base path; nullopt when a ".." would climb above it.
std::optional<std::string> route_rest(std::string_view rest);

// A CONNECT or absolute-form host: a DNS name of LDH labels (RFC 1123) or an IP literal (IPv6
// without its brackets). Anything else (commas, colons, '=', spaces...) is refused before any
// glob sees it or a certificate is minted for it.
bool valid_host(std::string_view host);
bool is_ip_literal(std::string_view host);

// host:port of a CONNECT target or an absolute-form http:// URL's authority ("[v6]:port" gives
// the address without brackets); nullopt when either part is invalid. `default_port` applies when
// the authority has none (0: a port is required).
struct Authority {
  std::string host;
  unsigned port = 0;
};
std::optional<Authority> parse_authority(std::string_view authority, unsigned default_port);

// proxy.forward for forward proxying and CONNECT (never for routes).
bool port_allowed(const config::ProxyForward& forward, unsigned port);
// An address on this machine's loopback: 127.0.0.0/8, ::1, the unspecified 0.0.0.0/8 and ::
// (Linux connects those to itself), and their IPv4-mapped forms.
bool loopback_address(const sockaddr* address);
// A host that names the loopback before any DNS: "localhost", "*.localhost" (RFC 6761) or a
// loopback literal. Names that resolve to it are caught at connect time (loopback_address).
bool loopback_host(std::string_view host);

// The token a client presents in Proxy-Authorization: `Bearer TOKEN`, or `Basic
// base64(user:TOKEN)` (what `http://user:TOKEN@host` in HTTP_PROXY sends), the scheme in any
// case; empty when neither.
std::string presented_token(std::string_view proxy_authorization);

// `text` as a JSON string literal, for the proxy's own answers (core/json_text.h's rules).
inline std::string json_string(std::string_view text) { return core::json_text::quote(text); }

// The body of an answer the proxy gives itself (a 502 when the upstream cannot be reached, a
// CONNECT that cannot be intercepted, ...): one spelling for the exchange, the tunnel, the
// upgrade and the session, so a client's parser meets one shape.
inline std::string error_body(std::string_view detail) {
  return "{\"error\":\"curlretry proxy\",\"detail\":" + json_string(detail) + "}\n";
}

// Constant time in the expected secret's length: leaks nothing but a length mismatch.
bool same_secret(std::string_view given, std::string_view expected);

}  // namespace curlretry::proxy
