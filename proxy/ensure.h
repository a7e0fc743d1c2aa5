// `curlretry proxy --ensure`: one proxy per user and address, shared by every session. Starts
// the proxy in the background unless this user's proxy already answers there; a lock file makes
// two sessions that ask at once start one proxy, not two. Whatever else holds the port (another
// user's server, or one of this user's that is not a curlretry proxy) is refused, never used:
// the command would send it its API keys.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <vector>

namespace curlretry::proxy {

// What answers at an address, as --ensure judges it.
struct Probe {
  enum class Kind {
    nobody,    // connection refused: the port is free
    ours,      // this user's socket, and health proved the secret
    foreign,   // the kernel says another user's socket accepted the connection
    unproven,  // no proof: not a curlretry proxy of this user's (or no answer in time)
  };
  Kind kind = Kind::nobody;
  std::string detail;  // foreign: "uid 1001 (alice)"; unproven: what was wrong
};

// Connects to `where`, checks the listener's owner through the kernel's socket tables, then
// asks GET /_curlretry/health with a fresh nonce (and `token` as Proxy-Authorization, only once
// the listener is known to be this user's) and checks the proof against `secret`.
Probe probe(const boost::asio::ip::tcp::endpoint& where, int timeout_ms, const std::string& secret,
            const std::string& token);

// `args`: this program's arguments without --ensure; `token`: proxy.token of the config the
// proxy will run with. Returns the exit status for the caller (0: this user's proxy answers).
int ensure_running(const boost::asio::ip::tcp::endpoint& where, const std::vector<std::string>& args,
                   const std::string& token);

}  // namespace curlretry::proxy
