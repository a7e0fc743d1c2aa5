// flaky-upstream: the scripted HTTP(S) server as a process, for tests and benches.
// Prints "port=<n>" once listening; exits on SIGTERM/SIGINT, or when stdin (a pipe or terminal)
// reaches EOF, so a test runner that dies cannot leak it.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "upstream/flaky_upstream.h"

namespace {

using curlretry::upstream::FlakyUpstream;

constexpr const char* kUsage =
    "usage: flaky-upstream [--port N] [--listen ADDR] [--tls] [--tls-name NAME]... [--cert-out FILE]\n"
    "                      [--port-file FILE] [--verbose]\n"
    "  --port N         listen on 127.0.0.1:N (default 0: an ephemeral port)\n"
    "  --listen ADDR    listen on ADDR instead: an IPv4 address of a loopback interface\n"
    "  --tls            serve HTTPS with a certificate made at start (CN=localhost, IP 127.0.0.1)\n"
    "  --tls-name NAME  the certificate also names DNS NAME (repeatable)\n"
    "  --cert-out FILE  write that certificate (PEM) to FILE, for curl --cacert\n"
    "  --port-file FILE write the port number to FILE once listening\n"
    "  --verbose        log one line per request on stderr\n"
    "Scripts: /s/<key>/<step>,<step>,... (see upstream/README.md).\n";

struct Args {
  FlakyUpstream::Options options;
  std::string port_file;
};

bool parse_args(int argc, char** argv, Args& args, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (arg == "--tls") {
      args.options.tls = true;
    } else if (arg == "--verbose") {
      args.options.verbose = true;
    } else if (arg == "--port") {
      const char* v = value();
      std::string_view text = v ? v : "";
      int port = -1;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
      if (!v || ec != std::errc{} || end != text.data() + text.size() || port < 0 || port > 65535) {
        error = "--port wants a number from 0 to 65535";
        return false;
      }
      args.options.port = port;
    } else if (arg == "--listen" || arg == "--tls-name") {
      const char* v = value();
      if (!v) {
        error = std::string(arg) + (arg == "--listen" ? " wants an address" : " wants a DNS name");
        return false;
      }
      if (arg == "--listen") args.options.listen_address = v;
      else args.options.tls_names.emplace_back(v);
    } else if (arg == "--cert-out" || arg == "--port-file") {
      const char* v = value();
      if (!v) {
        error = std::string(arg) + " wants a file name";
        return false;
      }
      (arg == "--cert-out" ? args.options.cert_out : args.port_file) = v;
    } else {
      error = "unknown argument '" + std::string(arg) + "'";
      return false;
    }
  }
  if (!args.options.tls_names.empty() && !args.options.tls) {
    error = "--tls-name needs --tls";
    return false;
  }
  if (!args.options.cert_out.empty() && !args.options.tls) {
    error = "--cert-out needs --tls";
    return false;
  }
  return true;
}

// Only a pipe, socket or terminal on stdin is a lifeline worth watching: /dev/null (a shell's
// background job, CI) would read as EOF at once and end the server before it served anything.
bool stdin_is_lifeline() {
  struct stat st {};
  if (::fstat(STDIN_FILENO, &st) != 0) return false;
  return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || ::isatty(STDIN_FILENO);
}

// Blocks until SIGTERM/SIGINT or EOF on the stdin lifeline.
void wait_for_the_end(int signal_fd) {
  bool watch_stdin = stdin_is_lifeline();
  for (;;) {
    pollfd fds[2] = {{signal_fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    int n = ::poll(fds, watch_stdin ? 2 : 1, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;
    if (watch_stdin && fds[1].revents != 0) {
      char sink[4096];
      ssize_t got = ::read(STDIN_FILENO, sink, sizeof sink);  // input is ignored, EOF ends us
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  std::string error;
  if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!parse_args(argc, argv, args, error)) {
    std::fprintf(stderr, "flaky-upstream: %s\n%s", error.c_str(), kUsage);
    return 2;
  }

  // Blocked before any thread starts, so every server thread inherits the mask and the signals
  // arrive here, through the signalfd.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a vanished reader of our stdout is not a reason to die
  int signal_fd = ::signalfd(-1, &stop_signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::perror("flaky-upstream: signalfd");
    return 1;
  }

  FlakyUpstream upstream;
  if (!upstream.start(args.options, &error)) {
    std::fprintf(stderr, "flaky-upstream: %s\n", error.c_str());
    return 1;
  }
  if (!args.port_file.empty()) {
    // Written whole under a temporary name, then renamed: a poller never reads half a number.
    std::string temporary = args.port_file + ".tmp";
    std::ofstream(temporary) << upstream.port() << "\n";
    if (std::rename(temporary.c_str(), args.port_file.c_str()) != 0) {
      std::fprintf(stderr, "flaky-upstream: cannot write %s: %s\n", args.port_file.c_str(), std::strerror(errno));
      return 1;
    }
  }
  std::printf("port=%d\n", upstream.port());
  std::fflush(stdout);

  wait_for_the_end(signal_fd);
  upstream.stop();
  ::close(signal_fd);
  return 0;
}
