// `curlretry-proxy` (run as `curlretry proxy`): argument parsing, the preload check, the config,
// and the event loop. See docs/PROXY.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/upstream_proxy.h"
#include "core/log_text.h"
#include "proxy/agent_settings.h"
#include "proxy/builtin_providers.h"
#include "proxy/ca_command.h"
#include "proxy/codex_auth.h"
#include "proxy/command_trust.h"
#include "proxy/connection_limit.h"
#include "proxy/ensure.h"
#include "proxy/ensure_digest.h"
#include "proxy/identity.h"
#include "proxy/listen_address.h"
#include "proxy/local_ca.h"
#include "proxy/no_proxy.h"
#include "proxy/omp_proxy.h"
#include "proxy/parent_proxy.h"
#include "proxy/pi_auth.h"
#include "proxy/preload.h"
#include "proxy/server.h"
#include "proxy/users_proxy.h"
#include "shim/proxy_layer.h"
#include "state/private_dir.h"

#ifndef CURLRETRY_VERSION
#define CURLRETRY_VERSION "unknown"
#endif

namespace {

using namespace curlretry;

// Written whole under a fresh name beside it, then renamed over it, so a reader never sees half a
// number. The fresh name is made with O_EXCL (mkstemp): in a directory anyone can write to, a
// fixed "PATH.tmp" is a name another user can plant a link at first, and the write would then
// truncate whatever it points to. rename() replaces a link at PATH itself, never its target.
bool write_port_file(const std::string& path, unsigned short port) {
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return false;
  const std::string text = std::to_string(port) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = ::close(fd) == 0;
  if (written && closed && std::rename(temp.c_str(), path.c_str()) == 0) return true;
  const int error = errno;  // for the caller's line: why, not unlink's answer
  ::unlink(temp.c_str());
  errno = error;
  return false;
}

// COMMAND with each route's `env` variable pointing at the proxy, and the preload (this process's
// LD_PRELOAD) still in place for children that do use libcurl. With proxy.intercept, also the
// proxy variables (HTTPS through CONNECT, intercepted or tunnelled) and the CA's trust variables.
// The built-in providers' routes (`builtin`) set their variable only when `builtin_variables` and
// the user has not set it, in the environment or in a file the program may load it from.
int run_with_routes(const std::vector<std::string>& command, const config::Config& cfg,
                    const boost::asio::ip::tcp::endpoint& where, const proxy::BuiltinProviders& builtin,
                    bool builtin_variables, const std::vector<std::pair<std::string, std::string>>& trust, bool quiet) {
  const std::string origin = "http://" + where.address().to_string() + ":" + std::to_string(where.port());
  bool handed_route = false;
  for (const auto& route : cfg.proxy.routes) {
    if (route.env.empty()) continue;
    const bool ours =
        std::find(builtin.route_names.begin(), builtin.route_names.end(), route.name) != builtin.route_names.end();
    const char* set = std::getenv(route.env.c_str());
    if (ours && (!builtin_variables || (set != nullptr && *set != '\0'))) continue;
    const auto in_file =
        std::find_if(builtin.file_variables.begin(), builtin.file_variables.end(),
                     [&](const proxy::BuiltinProviders::FileVariable& v) { return v.name == route.env; });
    if (ours && in_file != builtin.file_variables.end()) {
      if (!quiet) {
        const std::string program = core::log_text::escape(command[0]);
        std::cerr << "curlretry: proxy: " << route.env << " is set in " << in_file->file << ", which " << program
                  << " may load itself: it is left unset for it (a value given by the launch would win over that "
                     "file's), so "
                  << program << "'s requests there are retried only if it sends them through HTTPS_PROXY\n";
      }
      continue;
    }
    ::setenv(route.env.c_str(), (origin + "/" + route.name).c_str(), 1);
    handed_route = true;
  }
  // A route's URL is this proxy on loopback: a proxy of the user's that COMMAND keeps (routes
  // alone leave HTTPS_PROXY as it was) must not be asked for it. An entry covering an intercepted
  // host would send it around this proxy: dropped, unless a proxy of the user's is in play (there
  // NO_PROXY may be how the user's network reaches that host), which is then said.
  if (handed_route || !cfg.proxy.intercept.empty()) {
    const char* users_proxy = std::getenv(config::kUpstreamProxyVariable);
    const bool through_users_proxy =
        !cfg.proxy.upstream_proxy.empty() || (users_proxy != nullptr && *users_proxy != '\0');
    // no_proxy first, as curl, Python and Node read them when both are set.
    const proxy::CommandNoProxy no_proxy = proxy::command_no_proxy(
        std::getenv("no_proxy") ? std::getenv("no_proxy") : std::getenv("NO_PROXY"), cfg.proxy, !through_users_proxy);
    ::setenv("NO_PROXY", no_proxy.value.c_str(), 1);
    ::setenv("no_proxy", no_proxy.value.c_str(), 1);
    if (through_users_proxy && !no_proxy.covering.empty() && !quiet) {
      std::cerr << "curlretry: proxy: NO_PROXY names " << core::log_text::escape(no_proxy.covering.front())
                << ", which covers a host curlretry intercepts: " << core::log_text::escape(command[0])
                << " reaches it directly, as you asked, and its requests there are not retried\n";
    }
  }
  if (!cfg.proxy.intercept.empty()) {
    for (const auto& [name, value] : trust) ::setenv(name.c_str(), value.c_str(), 1);
    for (const char* name : proxy::kProxyVariables) ::setenv(name, origin.c_str(), 1);
    // Node from 22.21 / 24.5 makes its fetch and http follow HTTPS_PROXY with this (older ones ignore it).
    ::setenv("NODE_USE_ENV_PROXY", "1", 0);
    const char* upstream = std::getenv(config::kUpstreamProxyVariable);
    const std::string omp = proxy::hand_omp_proxy(
        command[0], origin, where,
        !cfg.proxy.upstream_proxy.empty() ? std::string_view(cfg.proxy.upstream_proxy) : (upstream ? upstream : ""));
    if (!omp.empty()) std::cerr << omp << '\n';
    const std::string bypass = proxy::claude_settings_bypass(
        command[0], {std::begin(proxy::kProxyVariables), std::end(proxy::kProxyVariables)});
    if (!bypass.empty()) std::cerr << bypass << '\n';
    std::vector<std::string> unretried = proxy::pi_signed_in_unretried(command[0], cfg.proxy.intercept);
    unretried.push_back(proxy::codex_chatgpt_unretried(command[0], cfg.proxy.intercept));
    unretried.push_back(proxy::claude_bedrock_unretried(command[0], cfg.proxy.intercept));
    for (const std::string& line : unretried) {
      if (!line.empty()) std::cerr << line << '\n';
    }
  }
  // Its libcurl children's requests that this proxy answers are retried here, not twice.
  ::setenv(shim::kViaProxyVariable, (where.address().to_string() + ":" + std::to_string(where.port())).c_str(), 1);
  std::string intercept;
  for (const auto& glob : cfg.proxy.intercept) intercept += (intercept.empty() ? "" : ",") + glob;
  ::setenv(shim::kViaProxyInterceptVariable, intercept.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "curlretry: proxy: cannot run " << command[0] << ": " << std::strerror(errno) << '\n';
  return errno == ENOENT ? 127 : 126;
}

// The command line, as parsed.
struct Args {
  std::string listen_text = "127.0.0.1:7878";
  std::optional<std::string> config_path;
  std::string port_file;
  long header_timeout_ms = 30000;
  long shutdown_grace_ms = 10000;
  bool ensure = false;
  bool builtin_providers = false;
  bool builtin_routes = false;
  bool quiet = false;
  bool or_direct = false;
  std::string reason;
  bool status_flag = false;
  bool stop_flag = false;
  std::vector<std::string> command;  // after `--`
};

void add_options(CLI::App& app, Args& a) {
  app.set_version_flag("--version", "curlretry-proxy " CURLRETRY_VERSION, "Print the version and exit");
  app.set_help_flag("-h,--help", "Print this help and exit");
  app.add_option("--listen", a.listen_text, "Address to listen on (default 127.0.0.1:7878; port 0 = any free port)")
      ->type_name("HOST:PORT");
  app.add_option("--config", a.config_path, "Config file (default: the usual search)")->type_name("FILE");
  app.add_option("--port-file", a.port_file, "Write the port listened on to FILE once ready")->type_name("FILE");
  app.add_option("--header-timeout-ms", a.header_timeout_ms, "Time a client has to send a request head")
      ->check(CLI::Range(100L, 3600000L));
  app.add_option("--shutdown-grace-ms", a.shutdown_grace_ms, "Time in-flight responses get on SIGINT/SIGTERM")
      ->check(CLI::Range(0L, 3600000L));
  app.add_flag("--ensure", a.ensure,
               "Start the proxy in the background unless a healthy one already listens there, then return");
  app.add_flag("--builtin-providers", a.builtin_providers,
               "Intercept the API hosts of the providers curlretry knows (Anthropic, OpenAI, Gemini, z.ai, ...) "
               "besides proxy.intercept");
  app.add_flag("--builtin-routes", a.builtin_routes,
               "With --builtin-providers: give COMMAND the built-in routes' base-URL variables (ANTHROPIC_BASE_URL, "
               "OPENAI_BASE_URL) where unset, for clients that ignore HTTPS_PROXY");
  app.add_flag("-q,--quiet", a.quiet, "With --ensure: no line when all went well");
  app.add_flag("--or-direct", a.or_direct,
               "With --ensure -- COMMAND: when no proxy of yours can serve, run COMMAND without it (after the "
               "reason, and a line saying nothing of it is retried) instead of failing");
  app.add_option("--reason", a.reason, "With --ensure: appended to its one line (the launcher says why)")
      ->type_name("TEXT");
  app.add_flag("--status", a.status_flag,
               "Say whether your proxy runs at --listen (and any beside it for other configs), and what it carries");
  app.add_flag("--stop", a.stop_flag,
               "Stop your proxy at --listen and any beside it (proven yours, as --ensure proves it)");
}

// The arguments the background proxy that --ensure starts gets: ours without --ensure's own, and
// the config file this one validated, wherever it runs from.
std::vector<std::string> background_args(int argc, char** argv, bool config_given) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--ensure" || a == "-q" || a == "--quiet" || a == "--or-direct" || a.rfind("--config=", 0) == 0 ||
        a.rfind("--reason=", 0) == 0) {
      continue;
    }
    if (a == "--config" || a == "--reason") {
      ++i;
      continue;
    }
    args.emplace_back(a);
  }
  if (config_given) {
    args.emplace_back("--config");
    args.emplace_back(std::getenv("CURLRETRY_CONFIG"));
  }
  return args;
}

int exec_direct(const std::vector<std::string>& command) {
  std::vector<char*> direct;
  for (const auto& a : command) direct.push_back(const_cast<char*>(a.c_str()));
  direct.push_back(nullptr);
  ::execvp(direct[0], direct.data());
  std::cerr << "curlretry: cannot run " << command[0] << ": " << std::strerror(errno) << '\n';
  return errno == ENOENT ? 127 : 126;
}

// The launcher's automatic path (--or-direct) when no proxy of the user's can serve: the command
// would have run without a proxy before; it still runs, and the user is told it is unprotected.
int unprotected(const std::vector<std::string>& command) {
  std::cerr << "curlretry: running " << command[0]
            << " without the proxy: none of its requests is retried (--no-proxy says so quietly)\n";
  return exec_direct(command);
}

// For interception: the CA COMMAND is told to trust, which the proxy about to start needs too (made
// now if missing), and the variables handing it over beside what COMMAND trusted already, which
// curlretry's proxy verifies the intercepted upstreams with as well (a company's TLS-inspecting
// proxy signs them: proxy/command_trust.h). The error text, empty on success.
std::string prepare_trust(const config::Config& cfg, std::vector<std::pair<std::string, std::string>>* trust) {
  std::string error;
  const proxy::CaPaths paths = proxy::ca_paths(&error);
  bool created = false;
  if (error.empty()) error = proxy::ensure_ca(paths, &created);
  if (!error.empty()) return error;
  if (created) std::cerr << "curlretry: proxy: created the local CA in " << paths.dir << '\n';
  proxy::KeptTrust kept;
  if (error = proxy::keep_command_trust(paths, &kept); !error.empty()) return error;
  if (!kept.upstream.empty() && cfg.proxy.upstream_ca_file.empty()) {
    ::setenv(config::kUpstreamCaFileVariable, kept.upstream.c_str(), 1);
  }
  *trust = std::move(kept.environment);
  return {};
}

// --ensure [-- COMMAND]: a healthy proxy of this user's at `where`, started if need be, then COMMAND.
int ensure_mode(const Args& a, const config::Config& cfg, const boost::asio::ip::tcp::endpoint& where,
                const proxy::BuiltinProviders& builtin, int argc, char** argv) {
  if (where.port() == 0) {
    std::cerr << "curlretry: proxy: --ensure needs a fixed port in --listen (a shared proxy must be findable)\n";
    return 2;
  }
  const std::vector<std::string> args = background_args(argc, argv, a.config_path.has_value());
  // A COMMAND run through a proxy with nowhere to send it would get no retry and no word.
  if (!a.command.empty() && cfg.proxy.routes.empty() && cfg.proxy.intercept.empty()) {
    std::cerr << "curlretry: --proxy: nothing to route or intercept in "
              << (cfg.file.empty() ? std::string("the config (no config file found)") : cfg.file) << ": "
              << a.command[0]
              << " would run with no retries. Name its provider's host in the config, e.g.\n"
                 "  version: 1\n"
                 "  proxy:\n"
                 "    intercept: [\"api.anthropic.com\"]   # through HTTPS_PROXY and the local CA\n"
                 "or leave out --proxy: `curlretry -- COMMAND` intercepts the providers curlretry knows\n";
    return 125;
  }
  // A proxy the user gave COMMAND (a company's, the only way out) stays the way out: curlretry's
  // proxy reaches upstreams through it (proxy.upstream_proxy, handed to the proxy started below
  // in its environment, which only this user can read; the config digest covers it, so a proxy
  // running without it is another config). Interception then hands COMMAND curlretry's proxy in
  // its place. The variable stays set for COMMAND: a launch inside it digests the same config. A
  // config that names its upstream proxy itself is left to it.
  if (!a.command.empty() && cfg.proxy.upstream_proxy.empty()) {
    if (const char* name = proxy::users_own_proxy_variable(where)) {
      const std::string problem = config::upstream_proxy_problem(std::getenv(name));
      if (problem.empty()) {
        ::setenv(config::kUpstreamProxyVariable, std::getenv(name), 1);
        if (!a.quiet) {
          std::cerr << "curlretry: proxy: " << name
                    << " names a proxy of yours: curlretry's proxy reaches the providers through it\n";
        }
      } else if (!cfg.proxy.intercept.empty()) {
        // Only an http:// proxy can be gone through; handing COMMAND curlretry's proxy in place
        // of this one would lose the only way out.
        const std::string what = std::string(name) + " names a proxy of yours that curlretry's proxy cannot go " +
                                 "through (" + problem + ")";
        if (a.or_direct) {
          std::cerr << "curlretry: proxy: " << what << '\n';
          return unprotected(a.command);
        }
        std::cerr << "curlretry: --proxy: " << what << ": " << a.command[0] << " would lose it; unset " << name
                  << " for this command where the providers are reachable without it\n";
        return 125;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> trust;  // the CA variables COMMAND is handed
  if (!a.command.empty() && !cfg.proxy.intercept.empty()) {
    if (const std::string error = prepare_trust(cfg, &trust); !error.empty()) {
      std::cerr << "curlretry: proxy: " << error << '\n';
      return a.or_direct ? unprotected(a.command) : 1;
    }
  }
  // COMMAND is handed the URL it runs with, so a port of its own will do when another holds
  // `where` (not with --port-file: the user asked for where it listens to be written there).
  // The launcher's reason says the known providers go through the proxy; the user's own gateways
  // named too, so a user can see theirs is retried (and from which setting it was taken).
  std::string reason = a.reason;
  for (std::size_t i = 0; !reason.empty() && i < builtin.given_hosts.size(); ++i) {
    reason += (i == 0 ? "; so do those to the hosts you point it at: " : ", ") + builtin.given_hosts[i];
  }
  proxy::EnsureRequest request{args, cfg.proxy.token, &cfg, a.quiet, reason};
  request.may_move = !a.command.empty() && a.port_file.empty();
  boost::asio::ip::tcp::endpoint serving = where;
  const int status = proxy::ensure_running(where, request, &serving);
  if (status != 0 && a.or_direct && !a.command.empty()) return unprotected(a.command);
  if (status != 0 || a.command.empty()) return status;
  return run_with_routes(a.command, cfg, serving, builtin, a.builtin_routes, trust, a.quiet);
}

// The local CA for proxy.intercept; nullptr (and `ok` false after the message) when it cannot be loaded.
std::shared_ptr<proxy::LocalCa> load_ca(const config::Config& cfg, bool& ok) {
  ok = true;
  if (cfg.proxy.intercept.empty()) return nullptr;
  std::string error;
  const proxy::CaPaths paths = proxy::ca_paths(&error);
  std::shared_ptr<proxy::LocalCa> ca;
  if (error.empty()) ca = proxy::LocalCa::load(paths, &error);
  if (!ca) {
    std::cerr << "curlretry: proxy: proxy.intercept in " << cfg.file << ": " << error << '\n';
    ok = false;
  }
  return ca;
}

// The secret health proves to --ensure (proxy/identity.h). Without it this proxy still serves,
// but `--ensure` (and `curlretry --proxy`) will not take it for this user's.
std::string load_identity_secret() {
  std::string error;
  std::string secret;
  const state::Dir dir = state::open_private_dir(state::default_dir(std::getenv), "");
  if (dir) secret = proxy::load_or_create_secret(dir, error);
  if (secret.empty()) {
    std::cerr << "curlretry: proxy: warning: " << (dir ? error : dir.error())
              << "; --ensure will not recognise this proxy as yours\n";
  }
  return secret;
}

// How many connections at once: proxy.max_connections against the open-files limit, raised here.
std::size_t max_connections(const config::Config& cfg) {
  const std::uint64_t open_files = proxy::raise_open_files_limit();
  const auto where = cfg.settings_sources.find("proxy.max_connections");
  const proxy::ConnectionLimit limit = proxy::connection_limit(
      cfg.proxy.max_connections, where != cfg.settings_sources.end() ? where->second : "the config", open_files);
  if (!limit.warning.empty()) std::cerr << "curlretry: proxy: warning: " << limit.warning << '\n';
  return limit.value;
}

std::string origin_of(const boost::asio::ip::tcp::endpoint& where, unsigned short port) {
  const std::string address = where.address().to_string();
  return "http://" + (where.address().is_v6() ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

void announce(const config::Config& cfg, const std::string& origin, std::size_t max_connections) {
  if (cfg.settings.log_level < config::LogLevel::info) return;
  std::cerr << "curlretry: proxy listening on " << origin << " (at most " << max_connections << " connections)\n";
  // Where the upstreams are reached through, by host and port: the URL may carry a password.
  if (const auto parent = proxy::parent_proxy(cfg.proxy.upstream_proxy)) {
    const bool v6 = parent->host.find(':') != std::string::npos;
    std::cerr << "curlretry: proxy reaches every upstream through your proxy " << (v6 ? "[" : "") << parent->host
              << (v6 ? "]" : "") << ":" << parent->port << " (proxy.upstream_proxy)\n";
  }
  for (const auto& route : cfg.proxy.routes) {
    std::cerr << "curlretry: proxy route " << origin << "/" << route.name << " -> " << route.upstream
              << (route.env.empty() ? "" : " (" + route.env + "=" + origin + "/" + route.name + ")") << '\n';
  }
}

// The proxy itself, in the foreground, until SIGINT/SIGTERM.
int serve(const Args& a, const config::Config& cfg, const boost::asio::ip::tcp::endpoint& where) {
  bool ca_ok = true;
  std::shared_ptr<proxy::LocalCa> ca = load_ca(cfg, ca_ok);
  if (!ca_ok) return 1;
  const std::string identity_secret = load_identity_secret();
  proxy::ServerOptions options;
  options.max_connections = max_connections(cfg);
  std::signal(SIGPIPE, SIG_IGN);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  {
    boost::asio::io_context io(1);
    options.listen = where;
    options.settings = cfg.proxy;
    options.ca = ca;
    options.config = std::make_shared<const config::Config>(cfg);
    options.identity_secret = identity_secret;
    options.config_digest = proxy::config_digest_field(proxy::config_digest(identity_secret, cfg, environ));
    options.header_timeout = std::chrono::milliseconds(a.header_timeout_ms);
    options.shutdown_grace = std::chrono::milliseconds(a.shutdown_grace_ms);
    proxy::Server server(io, options);
    try {
      server.start();
    } catch (const boost::system::system_error& e) {
      std::cerr << "curlretry: proxy: cannot listen on " << a.listen_text << ": " << e.code().message() << '\n';
      return 1;
    }
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                               int number) {
      if (ec) return;
      std::cerr << "curlretry: proxy: " << (number == SIGINT ? "SIGINT" : "SIGTERM")
                << (server.stopping() ? ": stopping now\n" : ": finishing in-flight responses, then stopping\n");
      server.shutdown();
      signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);
    announce(cfg, origin_of(where, server.port()), options.max_connections);
    if (!a.port_file.empty() && !write_port_file(a.port_file, server.port())) {
      std::cerr << "curlretry: proxy: cannot write --port-file " << a.port_file << ": " << std::strerror(errno) << '\n';
      return 1;
    }
    io.run();
    if (cfg.settings.log_level >= config::LogLevel::info) std::cerr << "curlretry: proxy stopped\n";
  }
  curl_global_cleanup();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "ca") return proxy::run_ca_command(argc - 1, argv + 1);
  CLI::App app{
      "Serves reverse routes to HTTP(S) upstreams through curlretry's retry engine (libcurl with "
      "libcurlretry.so preloaded), for programs the preload cannot reach.\n\n"
      "  curlretry proxy [--listen 127.0.0.1:7878] [--config F] [--port-file F]\n"
      "  curlretry proxy --ensure [--listen ...] [--config F] [--builtin-providers] [-- COMMAND [ARGS...]]\n"
      "  curlretry proxy --status|--stop [--listen ...]   (your own proxy only)\n"
      "  curlretry proxy ca [--json]     (the local CA for proxy.intercept)\n",
      "curlretry proxy"};
  Args a;
  add_options(app, a);
  // `--ensure -- COMMAND [ARGS...]`: everything after `--` is the command, never our options.
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      a.command.assign(argv + i + 1, argv + argc);
      argc = i;
      break;
    }
  }
  CLI11_PARSE(app, argc, argv);
  if (!a.command.empty() && !a.ensure) {
    std::cerr << "curlretry: proxy: a COMMAND after -- needs --ensure (it runs once the shared proxy answers)\n";
    return 2;
  }
  const std::string preload_error = proxy::ensure_preloaded(argv, a.config_path);
  if (!preload_error.empty()) {
    std::cerr << "curlretry: proxy: " << preload_error << '\n';
    return 1;
  }
  const config::LoadResult loaded = config::load(config::Environment::process(), a.config_path);
  for (const auto& warning : loaded.warnings) std::cerr << "curlretry: warning: " << warning << '\n';
  if (!loaded.ok()) {
    std::cerr << "curlretry: " << loaded.error << '\n';
    return 1;
  }
  config::Config cfg = *loaded.config;
  const proxy::BuiltinProviders builtin =
      a.builtin_providers ? proxy::add_builtin_providers(cfg) : proxy::BuiltinProviders{};
  const proxy::ListenAddress listen = proxy::parse_listen(a.listen_text);
  if (!listen.endpoint) {
    std::cerr << "curlretry: proxy: " << listen.error << '\n';
    return 2;
  }
  if (a.status_flag || a.stop_flag) {
    if (a.status_flag && a.stop_flag) {
      std::cerr << "curlretry: proxy: --status and --stop contradict\n";
      return 2;
    }
    return a.status_flag ? proxy::show_status(*listen.endpoint, cfg.proxy.token)
                         : proxy::stop_proxy(*listen.endpoint, cfg.proxy.token);
  }
  if (a.ensure) return ensure_mode(a, cfg, *listen.endpoint, builtin, argc, argv);
  // A proxy started from a proxied command's environment retries its own transfers.
  ::unsetenv(shim::kViaProxyVariable);
  ::unsetenv(shim::kViaProxyInterceptVariable);
  if (!proxy::is_loopback(listen.endpoint->address()) && cfg.proxy.token.empty()) {
    std::cerr << "curlretry: proxy: --listen " << a.listen_text
              << " is not a loopback address; set proxy.token in the config so this is never an open proxy\n";
    return 2;
  }
  if (cfg.proxy.routes.empty() && cfg.proxy.intercept.empty()) {
    std::cerr << "curlretry: proxy: warning: no proxy.routes in "
              << (cfg.file.empty() ? std::string("the config (none found)") : cfg.file)
              << "; only /_curlretry/health answers\n";
  }
  return serve(a, cfg, *listen.endpoint);
}
