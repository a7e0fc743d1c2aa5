// `curlretry proxy --ensure`: one proxy per user and address, shared by every session. Starts
// the proxy in the background unless this user's proxy already answers there; a lock file makes
// two sessions that ask at once start one proxy, not two. Whatever else holds the port (another
// user's server, or one of this user's that is not a curlretry proxy) is refused, never used:
// the command would send it its API keys. With a COMMAND, which is handed the URL it runs with,
// this user's proxy then moves to a port of its own (recorded in the private directory for the
// next launch), so a squatted port costs the user nothing; and when the user's proxy there runs
// another config and carries transfers, one with this launch's config starts beside it (up to
// four per address), so a launch asking for other settings still gets retries.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <vector>

#include "proxy/ensure_digest.h"

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
  std::string body;    // ours: the health answer's body
};

// A number field of a health body ("pid", "active", "connections"); -1 when absent.
long long health_number(const std::string& body, const char* name);

// Connects to `where`, checks the listener's owner through the kernel's socket tables, then
// asks GET /_curlretry/health with a fresh nonce (and `token` as Proxy-Authorization, only once
// the listener is known to be this user's) and checks the proof against `secret`.
Probe probe(const boost::asio::ip::tcp::endpoint& where, int timeout_ms, const std::string& secret,
            const std::string& token);

// Whether this user's curlretry proxy listens at `where`: a process of this user's running
// curlretry-proxy holds the listening socket (asked of the kernel and /proc: nothing is sent to
// anything else, a proxy of the user's own that is not ours among them), and then it proves the
// secret as --ensure's probe asks it to. The launcher never goes through one as if it were a
// proxy of the user's own: that would put two retry layers on each request.
bool listens_as_ours(const boost::asio::ip::tcp::endpoint& where, const std::string& token);

// What --ensure is asked to make sure of.
struct EnsureRequest {
  std::vector<std::string> args;           // this program's arguments without --ensure, for the proxy it starts
  std::string token;                       // proxy.token of the config the proxy will run with
  const config::Config* config = nullptr;  // what the proxy will run with, compared (digest) with a running one
  bool quiet = false;                      // no line when all went well
  std::string reason;                      // appended to the one line: why COMMAND runs through the proxy
  // COMMAND is given the proxy's URL, so any port serves it: when something not this user's proxy
  // holds the address, the proxy listens on a port the kernel picks instead (its number in
  // STEM.port of the private directory, where the next launch for this address looks first); when
  // this user's proxy there runs another config and is busy, one with this config listens beside
  // it (STEM.cfg-ID.port, looked for before the address's own).
  bool may_move = false;
};

// Exit statuses of --ensure besides 0 and 1 (another's listener, no proof, cannot start).
// Ours, running another config, and carrying transfers (without may_move, or with four proxies
// beside it already).
constexpr int kBusyWithOtherConfig = 125;

// Returns the exit status for the caller (0: this user's proxy answers, with this config, at
// `*serving`: `where`, or with may_move the port it moved to). A proxy of this user's running
// another config (proxy/ensure_digest.h) is stopped and started anew when it carries nothing;
// else, with may_move, one with this config is found or started beside it; else refused, naming
// what differs.
int ensure_running(const boost::asio::ip::tcp::endpoint& where, const EnsureRequest& request,
                   boost::asio::ip::tcp::endpoint* serving);

// `curlretry proxy --status`: this user's proxy at `where` (or where it moved to, when something
// else holds `where`), in one line (0), or why there is none (3: nobody listens; 1: not this
// user's proxy); then one line for each proxy of this user's beside it (0 when there is one).
int show_status(const boost::asio::ip::tcp::endpoint& where, const std::string& token);

// `curlretry proxy --stop`: SIGTERM to this user's proxy at `where`, or where it moved to, and to
// those beside it (each proven as --ensure proves it), then waits for their ports to close (0); 0
// too when nothing listens; 1 when what listens is not this user's proxy or one does not go.
int stop_proxy(const boost::asio::ip::tcp::endpoint& where, const std::string& token);

}  // namespace curlretry::proxy
