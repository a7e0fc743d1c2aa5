// The proxy's request side (proxy/request_rules.*, as proxy/session.cpp applies it): the bytes
// of a client connection parsed by Beast's request parser under the Session's bounds (head up to
// the header limit, then the buffer bound of a chunk-size line or trailer section), the framing
// rules, the head as it would go upstream (end_to_end_headers), the route path's dot-segments,
// the CONNECT / absolute-form authority, the forward rules and the presented token.
//
// Invariants:
// - a head the framing rules accept is framed one way only: no Content-Length beside
//   Transfer-Encoding, and a Transfer-Encoding means Beast reads the body as chunked (so its body
//   can never be taken for a next request);
// - nothing hop-by-hop or framing goes upstream (the upstream head is computed from the head
//   before its body: the trailer, parsed here too, is never part of it);
// - a resolved route path has no dot-segment left and starts with '/' or '?' (or is empty);
// - an accepted authority's host is a DNS name or an IP literal: no ',', '=', '@', space or
//   control byte (what could add a name to a certificate), and its port is 1..65535.
#include <algorithm>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "proxy/headers.h"
#include "proxy/request_rules.h"
#include "tests/fuzz/fuzz_check.h"

namespace beast = boost::beast;
namespace http = boost::beast::http;
using namespace curlretry::proxy;

namespace {

constexpr std::size_t kHeaderLimit = 8 * 1024;  // the Session's default is 64 KiB; smaller reaches the bound
constexpr std::size_t kLineLimit = 1024;        // likewise (Session::kLineLimit is 16 KiB)

// Moves up to the buffer's room from `wire` into it, as a socket read would; false: nothing more
// can come (the input ended, or the buffer is full: Beast's read answers buffer_overflow).
bool read_more(beast::flat_buffer& buffer, std::string_view& wire) {
  const std::size_t room = buffer.max_size() - std::min(buffer.max_size(), buffer.size());
  if (room == 0 || wire.empty()) return false;
  const std::size_t n = std::min({room, wire.size(), std::size_t{4096}});
  std::memcpy(buffer.prepare(n).data(), wire.data(), n);
  buffer.commit(n);
  wire.remove_prefix(n);
  return true;
}

void check_authority(std::string_view text, unsigned default_port) {
  const auto where = parse_authority(text, default_port);
  if (!where) return;
  FUZZ_CHECK(valid_host(where->host));
  FUZZ_CHECK(where->port >= 1 && where->port <= 65535);
  for (char c : where->host) {
    FUZZ_CHECK(c != ',' && c != '=' && c != '@' && c != ' ' && static_cast<unsigned char>(c) > 0x20 && c != 0x7f);
  }
  if (!is_ip_literal(where->host)) FUZZ_CHECK(where->host.find(':') == std::string::npos);
  (void)loopback_host(where->host);
}

void check_route_path(std::string_view target) {
  if (target.empty() || target[0] != '/') return;
  const std::size_t name_end = std::min(target.find_first_of("/?", 1), target.size());
  const auto rest = route_rest(target.substr(name_end));
  if (!rest) return;
  FUZZ_CHECK(rest->empty() || (*rest)[0] == '/' || (*rest)[0] == '?');
  const std::string_view path = std::string_view(*rest).substr(0, rest->find('?'));
  for (std::size_t b = 0; b < path.size();) {
    const std::size_t e = std::min(path.find('/', b + 1), path.size());
    std::string segment(path.substr(b + 1, e - b - 1));
    for (auto& c : segment) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    FUZZ_CHECK(segment != "." && segment != ".." && segment != "%2e" && segment != "%2e%2e" && segment != ".%2e" &&
               segment != "%2e.");
    b = e;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view wire(reinterpret_cast<const char*>(data), size);
  // The head, as Session::read_head parses it.
  beast::flat_buffer buffer;
  buffer.max_size(kHeaderLimit + kLineLimit);
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  while (!parser.is_header_done()) {
    beast::error_code ec;
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec && ec != http::error::need_more) return 0;
    if (!parser.is_header_done() && !read_more(buffer, wire)) return 0;
  }

  const RequestHead head = parser.get().base();
  if (framing_refusal(head)) return 0;
  if (head.count(http::field::transfer_encoding) != 0) {
    FUZZ_CHECK(parser.chunked());
    FUZZ_CHECK(!parser.content_length());
  }
  const auto upstream = end_to_end_headers(head);
  for (const auto& [name, value] : upstream) {
    FUZZ_CHECK(!hop_by_hop(name, {}) && !iequals(name, "host") && !iequals(name, "content-length") &&
               !iequals(name, "expect") && !iequals(name, "accept-encoding"));
  }
  (void)same_secret(presented_token(head[http::field::proxy_authorization]), "t0ken-0123456789abcdef");

  const std::string_view target = head.target();
  if (head.method() == http::verb::connect) {
    check_authority(target, 0);
  } else if (target.size() > 7 && curlretry::core::ascii::istarts_with(target, "http://")) {
    check_authority(target.substr(7, target.find_first_of("/?#", 7) - 7), 80);
  } else {
    check_route_path(target);
  }

  // A chunked body, as Session::collect_chunked reads it: past the head the buffer holds a
  // chunk-size line or the trailer section at most. Beast adds the trailer's fields to the
  // parser's head; what goes upstream is computed from the head before the body, unchanged.
  if (parser.is_done() || !parser.chunked()) return 0;
  buffer.max_size(std::max(buffer.size(), kLineLimit));
  http::request_parser<http::buffer_body> body_parser(std::move(parser));
  body_parser.body_limit(1 << 20);
  char chunk[4096];
  for (std::size_t rounds = 0; !body_parser.is_done() && rounds < size + 64; ++rounds) {
    body_parser.get().body().data = chunk;
    body_parser.get().body().size = sizeof chunk;
    body_parser.get().body().more = true;
    beast::error_code ec;
    const std::size_t used = body_parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::need_buffer) continue;
    if (ec && ec != http::error::need_more) break;
    if (!body_parser.is_done() && (ec || used == 0) && !read_more(buffer, wire)) break;
  }
  return 0;
}
