#include "proxy/ensure.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>
#include <utility>

#include "core/count_text.h"
#include "proxy/ensure_records.h"
#include "proxy/identity.h"
#include "proxy/socket_owner.h"
#include "state/private_dir.h"

namespace curlretry::proxy {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

std::string address_and_port(const boost::asio::ip::tcp::endpoint& where) {
  return where.address().to_string() + ":" + std::to_string(where.port());
}

// What holds `where` instead of this user's proxy, for the line that says the proxy moved.
std::string held_by(const boost::asio::ip::tcp::endpoint& where, const Probe& found) {
  const std::string at = address_and_port(where);
  return found.kind == Probe::Kind::foreign ? at + " is held by " + found.detail + ", not by you"
                                            : at + " answers but is not your curlretry proxy (" + found.detail + ")";
}

// At most this many proxies beside one address (proxy/ensure_records.h): each is a process of
// the user's that lives until stopped, and a user who tries one setting after another must not
// leave a pile of them.
constexpr int kMaxBeside = 4;

// Why what answers at `where` is refused, for the user: names the port, its owner when known,
// and what to do.
std::string refusal(const boost::asio::ip::tcp::endpoint& where, const Probe& found, const std::string& dir) {
  const std::string at = address_and_port(where);
  if (found.kind == Probe::Kind::foreign) {
    return at + " is held by " + found.detail + ", not by you (uid " + std::to_string(::getuid()) +
           "): it is not your curlretry proxy, and the command is not given its URL; stop it or choose another "
           "port with --listen";
  }
  return at + " answers but is not your curlretry proxy (" + found.detail + "; your proxies prove the secret in " +
         dir + "/" + kSecretFile +
         "); the command is not given its URL; stop what listens there or choose another "
         "port with --listen";
}

// LOCK_EX, given up after `seconds`: only this user can hold the lock (the file is in the
// private directory), but a stuck --ensure of theirs must not hang every later one.
bool lock_within(int fd, int seconds) {
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The private directory and the secret proofs are checked against.
struct Identity {
  state::Dir dir;
  std::string secret;
  std::string error;
};

Identity load_identity() {
  Identity out{state::open_private_dir(state::default_dir(std::getenv), ""), "", ""};
  if (!out.dir) {
    out.error = out.dir.error();
    return out;
  }
  out.secret = load_or_create_secret(out.dir, out.error);
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
  return out;
}

// SIGTERM to the pid a proven health answer gave, once /proc says this user runs it, then waits
// (bounded) for the port to close. Empty on success, else why not.
std::string stop_ours(const boost::asio::ip::tcp::endpoint& where, const Probe& found, const Identity& id,
                      const std::string& token) {
  const long long pid = health_number(found.body, "pid");
  struct stat st{};
  const std::string proc = "/proc/" + std::to_string(pid);
  if (pid <= 1 || ::stat(proc.c_str(), &st) != 0 || st.st_uid != ::getuid()) {
    return "its health answer names pid " + std::to_string(pid) + ", which is not a process of yours";
  }
  if (::kill(static_cast<pid_t>(pid), SIGTERM) != 0) return "kill " + std::to_string(pid) + ": " + std::strerror(errno);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    if (probe(where, 500, id.secret, token).kind == Probe::Kind::nobody) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "pid " + std::to_string(pid) + " still listens 20 s after SIGTERM";
}

}  // namespace

long long health_number(const std::string& body, const char* name) {
  const std::string needle = "\"" + std::string(name) + "\":";
  const std::size_t at = body.find(needle);
  if (at == std::string::npos) return -1;
  try {
    return std::stoll(body.substr(at + needle.size(), 20));
  } catch (const std::exception&) {
    return -1;
  }
}

Probe probe(const boost::asio::ip::tcp::endpoint& where, int timeout_ms, const std::string& secret,
            const std::string& token) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Probe out{Probe::Kind::unproven, "no answer to the health request", ""};
  const int fd = ::socket(where.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return out;
  do {
    if (::connect(fd, where.data(), static_cast<socklen_t>(where.size())) != 0 && errno != EINPROGRESS) {
      if (errno == ECONNREFUSED) out = {Probe::Kind::nobody, "", ""};
      break;
    }
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) != 1) break;
    int error = 0;
    socklen_t len = sizeof error;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
      if (error == ECONNREFUSED) out = {Probe::Kind::nobody, "", ""};
      break;
    }
    // Before a byte is sent: another user's listener learns nothing, not even the nonce.
    const std::optional<uid_t> owner = peer_socket_owner(fd);
    if (owner && *owner != ::getuid()) {
      out = {Probe::Kind::foreign, state::describe_uid(*owner), ""};
      break;
    }
    const std::string nonce = make_nonce();
    std::string request = "GET /_curlretry/health HTTP/1.1\r\nHost: curlretry\r\nConnection: close\r\n" +
                          std::string(kNonceHeader) + ": " + nonce + "\r\n";
    // The token only to a listener the kernel says is ours (without sock_diag, none is sent).
    if (owner && !token.empty()) request += "Proxy-Authorization: Bearer " + token + "\r\n";
    request += "\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) break;
    std::string answer;
    char buffer[4096];
    while (answer.size() < 65536) {
      p = {fd, POLLIN, 0};
      if (::poll(&p, 1, remaining_ms(deadline)) != 1) break;
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      answer.append(buffer, static_cast<std::size_t>(n));
    }
    if (answer.empty()) break;
    if (answer.rfind("HTTP/1.1 200 ", 0) != 0) {
      out.detail = "its health answer is not 200";
      if (answer.rfind("HTTP/1.1 407 ", 0) == 0) out.detail += " but 407 (proxy.token differs?)";
      break;
    }
    const std::string expected = health_proof(secret, address_and_port(where), nonce);
    if (expected.empty() || answer.find("\"proof\":\"" + expected + "\"") == std::string::npos) {
      out.detail = "its health answer does not prove the secret";
      break;
    }
    const std::size_t head_end = answer.find("\r\n\r\n");
    out = {Probe::Kind::ours, "", head_end == std::string::npos ? std::string() : answer.substr(head_end + 4)};
  } while (false);
  ::close(fd);
  return out;
}

bool listens_as_ours(const boost::asio::ip::tcp::endpoint& where, const std::string& token) {
  const std::optional<pid_t> pid = listening_process(where.data(), static_cast<socklen_t>(where.size()));
  std::error_code ec;
  if (!pid ||
      std::filesystem::read_symlink("/proc/" + std::to_string(*pid) + "/exe", ec).filename() != "curlretry-proxy") {
    return false;
  }
  const Identity id = load_identity();
  return !id.secret.empty() && probe(where, 1000, id.secret, token).kind == Probe::Kind::ours;
}

namespace {

// A proxy of ours answers at `where` (`found`): nullopt when one is to be started in its place
// (`restarted` then says why), else the status --ensure returns. When it runs another config and
// carries transfers, `busy` (when given) gets that in words and nothing is printed: the caller
// starts one with this config beside it.
std::optional<int> settle_running(const boost::asio::ip::tcp::endpoint& where, const Probe& found, const Identity& id,
                                  const EnsureRequest& request, std::string& restarted, std::string* busy) {
  const std::string origin = "http://" + address_and_port(where);
  const std::vector<std::string> differ =
      config_differences(config_digest(id.secret, *request.config, environ), found.body);
  if (differ.empty()) {
    if (!request.quiet) {
      std::cerr << "curlretry: proxy already running on " << origin
                << (request.reason.empty() ? "" : "; " + request.reason) << '\n';
    }
    return 0;
  }
  // Its transfers would be cut, or a launch would run under a config it did not ask for:
  // neither without a word. The health request itself is one of the connections.
  const long long active = health_number(found.body, "active");
  const long long connections = health_number(found.body, "connections");
  if (active != 0 || connections > 1) {
    const std::string what = "your proxy on " + origin + " runs with other " + joined(differ) +
                             " than this launch asks, and carries " +
                             core::counted(active > 0 ? active : 0, "transfer", "transfers") + " on " +
                             core::counted(connections - 1, "other connection", "other connections");
    if (busy != nullptr) {
      *busy = what;
      return kBusyWithOtherConfig;
    }
    std::cerr << "curlretry: " << what
              << ": not restarted under them; run the command again once they are done, stop it with "
                 "`curlretry proxy --stop --listen "
              << address_and_port(where) << "`, or choose another port with --listen\n";
    return kBusyWithOtherConfig;
  }
  const std::string why = stop_ours(where, found, id, request.token);
  if (!why.empty()) {
    std::cerr << "curlretry: proxy --ensure: your proxy on " << origin << " runs with other " << joined(differ)
              << " and could not be stopped: " << why << '\n';
    return 1;
  }
  restarted = joined(differ);
  return std::nullopt;
}

// This user's proxy recorded in STEM.port (moved off `where`, or beside it), when the record names
// a port and it answers there as ours.
std::optional<std::pair<boost::asio::ip::tcp::endpoint, Probe>> recorded_proxy(
    const boost::asio::ip::tcp::endpoint& where, const std::string& stem, const Identity& id,
    const std::string& token) {
  const std::optional<unsigned short> port = recorded_port(id.dir, stem);
  if (!port) return std::nullopt;
  const boost::asio::ip::tcp::endpoint at(where.address(), *port);
  Probe found = probe(at, 2000, id.secret, token);
  if (found.kind != Probe::Kind::ours) return std::nullopt;
  return std::make_pair(at, std::move(found));
}

// The background proxy's arguments when it moves: the launch's, with --listen ADDRESS:0 and
// --port-file STEM.port (the record the next launch reads) in place of its own.
std::vector<std::string> moved_args(const std::vector<std::string>& args, const boost::asio::ip::tcp::endpoint& where,
                                    const std::string& record) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--listen" || args[i] == "--port-file") {
      ++i;
      continue;
    }
    if (args[i].rfind("--listen=", 0) == 0 || args[i].rfind("--port-file=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  const std::string address = where.address().to_string();
  out.insert(out.end(),
             {"--listen", (where.address().is_v6() ? "[" + address + "]" : address) + ":0", "--port-file", record});
  return out;
}

// Starts the proxy in the background (its stderr to STEM.log in the private dir) and waits up to
// 20 s for it to answer as ours: at `where`, or, when `elsewhere` says why not there, on a port
// the kernel picks, learnt from the record it writes (STEM.port). `*serving` is where it answered.
int start_and_wait(const boost::asio::ip::tcp::endpoint& where, const std::string& stem, const Identity& id,
                   const EnsureRequest& request, const std::string& restarted, const std::string& elsewhere,
                   boost::asio::ip::tcp::endpoint* serving) {
  const state::Dir& dir = id.dir;
  std::string error;
  const std::string log = dir.path() + "/" + stem + ".log";
  const int out = dir.open_file(stem + ".log", O_WRONLY | O_CREAT | O_APPEND, error);
  if (out < 0) {
    std::cerr << "curlretry: proxy --ensure: " << error << '\n';
    return 1;
  }
  std::vector<std::string> args = request.args;
  boost::asio::ip::tcp::endpoint at = where;
  if (!elsewhere.empty()) {
    // A record left by an earlier proxy must not be read as this one's port.
    if (::unlinkat(dir.fd(), (stem + ".port").c_str(), 0) != 0 && errno != ENOENT) {
      std::cerr << "curlretry: proxy --ensure: cannot remove " << dir.path() << "/" << stem
                << ".port: " << std::strerror(errno) << '\n';
      ::close(out);
      return 1;
    }
    args = moved_args(args, where, dir.path() + "/" + stem + ".port");
    at.port(0);
  }
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "curlretry: proxy --ensure: fork: " << std::strerror(errno) << '\n';
    ::close(out);
    return 1;
  }
  if (child == 0) {
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) ::dup2(null, 0), ::dup2(null, 1);
    ::dup2(out, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>("curlretry-proxy"));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  ::close(out);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  Probe last;
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) {
      std::cerr << "curlretry: proxy --ensure: the proxy exited at start (status " << status << "); see " << log
                << '\n';
      return 1;
    }
    if (at.port() == 0) {
      if (const std::optional<unsigned short> port = recorded_port(dir, stem)) at.port(*port);
    }
    if (at.port() != 0) last = probe(at, 500, id.secret, request.token);
    if (last.kind == Probe::Kind::ours) {
      if (!request.quiet) {
        std::cerr << "curlretry: proxy " << (restarted.empty() ? "started" : "restarted") << " on http://"
                  << address_and_port(at) << " (pid " << child << ", log " << log << ")"
                  << (restarted.empty() ? "" : ": the running one had other " + restarted)
                  << (elsewhere.empty() ? "" : ": " + elsewhere)
                  << (request.reason.empty() ? "" : "; " + request.reason) << '\n';
      }
      *serving = at;
      return 0;
    }
    // Someone else took the port while ours started: never theirs.
    if (last.kind == Probe::Kind::foreign) {
      std::cerr << "curlretry: proxy --ensure: " << refusal(at, last, dir.path()) << '\n';
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cerr << "curlretry: proxy --ensure: no proxy of yours answers on http://"
            << (at.port() != 0 ? address_and_port(at) : address_and_port(where) + "'s stand-in port") << " after 20 s"
            << (last.kind == Probe::Kind::unproven ? " (" + last.detail + ")" : std::string()) << "; see " << log
            << '\n';
  return 1;
}

// What a health answer says of the proxy, for --status: "pid …, … active transfers, …".
std::string described(const Probe& found) {
  // The health request is one of the connections: not counted.
  const long long connections = health_number(found.body, "connections");
  const std::size_t routes = found.body.find("\"routes\":[");
  return "pid " + std::to_string(health_number(found.body, "pid")) + ", " +
         std::to_string(health_number(found.body, "active")) + " active transfers, " +
         std::to_string(connections > 0 ? connections - 1 : 0) + " other connections, routes " +
         (routes == std::string::npos ? std::string("[]")
                                      : found.body.substr(routes + 9, found.body.find(']', routes) - routes - 8));
}

struct Beside {
  std::string stem;
  boost::asio::ip::tcp::endpoint at;
  Probe found;
};

// The proxies of this user's recorded beside `where` that answer as ours; a record nobody
// answers at any more (its proxy ended) is removed on the way.
std::vector<Beside> beside_proxies(const boost::asio::ip::tcp::endpoint& where, const Identity& id,
                                   const std::string& token) {
  std::vector<Beside> out;
  for (std::string& stem : beside_stems(id.dir, where)) {
    const std::optional<unsigned short> port = recorded_port(id.dir, stem);
    const boost::asio::ip::tcp::endpoint at(where.address(), port.value_or(0));
    Probe found = port ? probe(at, 2000, id.secret, token) : Probe{};
    if (found.kind == Probe::Kind::ours) {
      out.push_back({std::move(stem), at, std::move(found)});
    } else if (found.kind == Probe::Kind::nobody) {
      ::unlinkat(id.dir.fd(), (stem + ".port").c_str(), 0);
    }
  }
  return out;
}

// The proxy at (or moved off) `where` runs another config and carries transfers (`busy` says
// so): this launch's config gets a proxy of its own beside it, on a port the kernel picks, rather
// than the command running with no retries at all. Up to kMaxBeside of them per address; with
// that many, an idle one makes way (as the address's own would), and only when all carry
// transfers is the launch refused.
int start_beside(const boost::asio::ip::tcp::endpoint& where, const std::string& stem, const Identity& id,
                 const EnsureRequest& request, const std::string& busy, boost::asio::ip::tcp::endpoint* serving) {
  const std::vector<Beside> running = beside_proxies(where, id, request.token);
  std::string instead;
  if (running.size() >= static_cast<std::size_t>(kMaxBeside)) {
    const auto idle = std::find_if(running.begin(), running.end(), [](const Beside& b) {
      return health_number(b.found.body, "active") == 0 && health_number(b.found.body, "connections") <= 1;
    });
    if (idle == running.end() || !stop_ours(idle->at, idle->found, id, request.token).empty()) {
      std::cerr << "curlretry: " << busy << ", and the " << running.size()
                << " proxies of yours beside it for other configs (the most kept per address) carry transfers "
                   "too: none started for this one; run the command again once they are done, or stop them all "
                   "with `curlretry proxy --stop --listen "
                << address_and_port(where) << "`\n";
      return kBusyWithOtherConfig;
    }
    ::unlinkat(id.dir.fd(), (idle->stem + ".port").c_str(), 0);
    instead = " (in place of an idle one beside it for another config, pid " +
              std::to_string(health_number(idle->found.body, "pid")) + ")";
  }
  return start_and_wait(where, stem, id, request, "",
                        busy + ", so one with this launch's config listens here" + instead +
                            "; the next launch with it finds it",
                        serving);
}

}  // namespace

int ensure_running(const boost::asio::ip::tcp::endpoint& where, const EnsureRequest& request,
                   boost::asio::ip::tcp::endpoint* serving) {
  const Identity id = load_identity();
  if (id.secret.empty()) {
    std::cerr << "curlretry: proxy --ensure: " << id.error << '\n';
    return 1;
  }
  const state::Dir& dir = id.dir;
  std::string error;
  const std::string stem = stem_of(where);
  const int lock = dir.open_file(stem + ".lock", O_RDWR | O_CREAT, error);
  if (lock < 0) {
    std::cerr << "curlretry: proxy --ensure: " << error << '\n';
    return 1;
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{lock};
  // Held until we return: a second --ensure waits here, then finds this one's proxy.
  if (!lock_within(lock, 30)) {
    std::cerr << "curlretry: proxy --ensure: " << dir.path() << "/" << stem
              << ".lock is held by another --ensure of yours for 30 s; giving up\n";
    return 1;
  }
  std::string restarted;
  // A command is handed its proxy's URL, so it may be served off `where`: by a proxy beside the
  // address's own that runs this config (looked for first: a launch that found the address's
  // busy keeps finding its own, rather than restarting that one once it is idle), or where the
  // address's own moved to.
  std::string busy;
  std::string* const busy_out = request.may_move ? &busy : nullptr;
  const ConfigDigest wanted = config_digest(id.secret, *request.config, environ);
  const std::string beside = request.may_move ? beside_stem(where, config_id(wanted)) : "";
  if (request.may_move) {
    if (auto own = recorded_proxy(where, beside, id, request.token);
        own && config_differences(wanted, own->second.body).empty()) {
      *serving = own->first;
      return *settle_running(own->first, own->second, id, request, restarted, nullptr);
    }
    if (auto moved = recorded_proxy(where, stem, id, request.token)) {
      const std::optional<int> status = settle_running(moved->first, moved->second, id, request, restarted, busy_out);
      *serving = moved->first;
      if (status && !busy.empty()) return start_beside(where, beside, id, request, busy, serving);
      if (status) return *status;
    }
  }
  const Probe found = probe(where, 2000, id.secret, request.token);
  if (found.kind == Probe::Kind::ours) {
    *serving = where;
    const std::optional<int> status = settle_running(where, found, id, request, restarted, busy_out);
    if (status && !busy.empty()) return start_beside(where, beside, id, request, busy, serving);
    if (status) return *status;
  } else if (found.kind != Probe::Kind::nobody) {
    if (!request.may_move) {
      std::cerr << "curlretry: proxy --ensure: " << refusal(where, found, dir.path()) << '\n';
      return 1;
    }
    return start_and_wait(where, stem, id, request, restarted,
                          held_by(where, found) + ", so yours listens here; the next launch finds it", serving);
  }
  return start_and_wait(where, stem, id, request, restarted, "", serving);
}

int show_status(const boost::asio::ip::tcp::endpoint& where, const std::string& token) {
  const std::string origin = "http://" + address_and_port(where);
  const Identity id = load_identity();
  if (id.secret.empty()) {
    std::cerr << "curlretry: proxy --status: " << id.error << '\n';
    return 1;
  }
  Probe found = probe(where, 2000, id.secret, token);
  std::string at = origin;
  if (found.kind != Probe::Kind::ours) {
    if (auto moved = recorded_proxy(where, stem_of(where), id, token)) {
      at = "http://" + address_and_port(moved->first) + " (moved from " + address_and_port(where) + ")";
      found = std::move(moved->second);
    }
  }
  const auto beside = beside_proxies(where, id, token);
  int status = 0;
  if (found.kind == Probe::Kind::ours) {
    std::cout << "your proxy on " << at << ": " << described(found) << '\n';
  } else if (found.kind == Probe::Kind::nobody) {
    std::cout << "no proxy on " << origin << '\n';
    status = beside.empty() ? 3 : 0;
  } else {
    std::cerr << "curlretry: proxy --status: " << refusal(where, found, id.dir.path()) << '\n';
    status = 1;
  }
  for (const Beside& other : beside) {
    std::cout << "your proxy on http://" << address_and_port(other.at) << " (beside " << address_and_port(where)
              << ", another config): " << described(other.found) << '\n';
  }
  return status;
}

int stop_proxy(const boost::asio::ip::tcp::endpoint& where, const std::string& token) {
  const std::string origin = "http://" + address_and_port(where);
  const Identity id = load_identity();
  if (id.secret.empty()) {
    std::cerr << "curlretry: proxy --stop: " << id.error << '\n';
    return 1;
  }
  Probe found = probe(where, 2000, id.secret, token);
  boost::asio::ip::tcp::endpoint at = where;
  if (found.kind != Probe::Kind::ours) {
    if (auto moved = recorded_proxy(where, stem_of(where), id, token)) {
      at = moved->first;
      found = std::move(moved->second);
    }
  }
  int status = 0;
  bool stopped = false;
  // Each stopped one in a line; `label` says where it was found when not at `where`.
  const auto stop = [&](const boost::asio::ip::tcp::endpoint& port, const Probe& answer, const std::string& label) {
    const std::string why = stop_ours(port, answer, id, token);
    if (!why.empty()) {
      std::cerr << "curlretry: proxy --stop: " << why << '\n';
      status = 1;
      return false;
    }
    std::cerr << "curlretry: proxy on http://" << address_and_port(port) << label << " stopped (pid "
              << health_number(answer.body, "pid") << ")\n";
    stopped = true;
    return true;
  };
  if (found.kind == Probe::Kind::ours) {
    stop(at, found, at == where ? "" : " (moved from " + address_and_port(where) + ")");
  } else if (found.kind != Probe::Kind::nobody) {
    std::cerr << "curlretry: proxy --stop: " << refusal(where, found, id.dir.path()) << '\n';
    status = 1;
  }
  for (const Beside& other : beside_proxies(where, id, token)) {
    if (stop(other.at, other.found, " (beside " + address_and_port(where) + ", another config)")) {
      ::unlinkat(id.dir.fd(), (other.stem + ".port").c_str(), 0);
    }
  }
  if (!stopped && status == 0) std::cerr << "curlretry: proxy --stop: no proxy on " << origin << '\n';
  return status;
}

}  // namespace curlretry::proxy
