// An HTTP/1.1 upgrade to a WebSocket (`Connection: Upgrade`, `Upgrade: websocket`) carried through
// the proxy as a tunnel, for routes, forward requests and intercepted CONNECTs alike.
//
// libcurl cannot carry it: Debian's 7.88 is built without its (experimental) WebSocket support
// (`curl-config --protocols` has no WS), and a plain transfer cannot hand its connection over after
// a 101. So this side is Asio + OpenSSL, with the same rules as the proxy's libcurl upstream:
// proxy.forward's loopback refusal on the resolved addresses (the Session checked ports and
// literals), TLS verified against the system store plus proxy.upstream_ca_file, host name checked,
// ALPN http/1.1.
//
// The handshake is retried, the WebSocket is not. A non-101 answer (or a connection that fails
// before any answer) is an ordinary attempt: core::decide() judges it under the config's policy for
// GET on that host, exactly as the shim judges a transfer, and a refused handshake (429, 503 with
// Retry-After, a reset before the answer) is tried again after the policy's backoff. Nothing of a
// WebSocket has happened then: the upstream refused before switching, so sending the same GET again
// is as safe as any GET. The give-up answer reaches the client byte for byte (status, headers, body),
// with `Connection: close`. Once the upstream has sent 101 the bytes are the WebSocket's own, and
// a cut there is the client's to handle (it has its own reconnect), as with a blind tunnel.
//
// After the 101: 16 KiB per direction, read then write then read (never more in memory), closed
// after proxy.tunnel_idle_ms without a byte either way, or when a write stalls for the proxy's
// write_stall, or when either side ends its stream (a WebSocket's close handshake is in-band and
// done by then). The connection stays the Session's, so it counts under max_connections, and it
// counts as a transfer in health's `active` (a busy proxy is not restarted by --ensure).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace curlretry::proxy {

class Server;

// Where the upgrade goes and what is sent there.
struct UpgradeTarget {
  bool tls = false;
  std::string host;  // DNS name or IP literal, no brackets
  std::string port;
  std::string path;  // for the policy lookup (no query)
  std::string head;  // the request head for the upstream, through its blank line
  std::string early;  // bytes the client sent after its head, sent after it
  bool refuse_loopback = true;
  bool opaque_errors = true;  // a non-route target: every failure is kUnreachable's 502
};

// The upstream URL (as the Session computed it for an Exchange) and the client's head fields
// turned into an UpgradeTarget's head; nullopt when the URL is not http(s) with a host.
struct UpgradeHead {
  std::string method;
  std::string upgrade;  // the Upgrade header's value
  std::vector<std::pair<std::string, std::string>> headers;  // end to end (request_rules.h)
};
std::optional<UpgradeTarget> upgrade_target(const std::string& url, const UpgradeHead& head);

class Upgrade {
 public:
  virtual ~Upgrade() = default;
  virtual void start() = 0;
  // The Server's sweep: the current deadline (connect, answer, idle, write stall) passed.
  virtual void sweep(std::chrono::steady_clock::time_point now) = 0;
  // The Session is closing: stop, without calling `done`.
  virtual void close() = 0;
};

// `client` is the Session's stream, `keep` the Session itself, held until the last handler ran.
// `done(answer)` is called once when the upgrade is over: `answer` (a non-101 final response, or
// the proxy's 502) is for the Session to write before it closes; empty: close now.
template <class ClientStream>
std::shared_ptr<Upgrade> make_upgrade(Server& server, ClientStream& client, std::shared_ptr<void> keep,
                                      UpgradeTarget target, std::function<void(std::string)> done);

}  // namespace curlretry::proxy
