// `curlretry demo`: what a new user sees first. A flaky upstream on loopback answers 503, 503,
// then 200; the real curl runs against it twice, once as is and once with libcurlretry.so
// preloaded. No network, no config: only the built-in policy.
#include "cli/demo.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/keys.h"
#include "core/count_text.h"
#include "upstream/flaky_upstream.h"

extern char** environ;

namespace curlretry::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Variables that would change what the demo shows: it demonstrates the built-in policy, so every
// variable that overrides a policy key (config/keys.h), and those that switch curlretry off or
// send its log lines elsewhere.
std::vector<std::string> policy_overrides() {
  std::vector<std::string> out;
  for (const config::KeyDef& key : config::kKeys) {
    if (key.scope != config::KeyScope::policy && key.name != "disable" && key.name != "log" && key.name != "log_file") {
      continue;
    }
    for (const std::string_view variable : {key.env, key.legacy_env}) {
      if (!variable.empty()) out.emplace_back(variable);
    }
  }
  return out;
}

struct Run {
  int status = -1;  // exit status; 128+N when killed by signal N
  std::string out;  // what the child wrote on stdout (also passed through to ours)
  double seconds = 0;
};

// The environment as "NAME=value" strings: ours, minus `drop`, plus `add`.
std::vector<std::string> environment(const std::vector<std::string>& drop, const std::vector<std::string>& add) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry = *e;
    std::string_view name = entry.substr(0, entry.find('='));
    bool dropped = false;
    for (const auto& d : drop) dropped = dropped || name == d;
    if (!dropped) env.emplace_back(entry);
  }
  env.insert(env.end(), add.begin(), add.end());
  return env;
}

// LD_PRELOAD without any libcurlretry (someone may run the demo under `curlretry --`): the
// plain run must really be plain.
std::string preload_without_us(const std::string& library) {
  const char* current = std::getenv("LD_PRELOAD");
  std::string kept;
  std::string_view rest = current ? current : "";
  while (!rest.empty()) {
    auto end = rest.find_first_of(": ");
    std::string_view entry = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    bool ours = entry == library || entry.ends_with("/libcurlretry.so") || entry == "libcurlretry.so";
    if (entry.empty() || ours) continue;
    if (!kept.empty()) kept += ':';
    kept += entry;
  }
  return kept;
}

// Single-quotes what a shell would split or expand, so the line can be pasted as it is.
std::string shell_word(const std::string& word) {
  bool plain = !word.empty() && word.find_first_not_of(
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+=.,:/@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void print_command(const std::string& prefix, const std::vector<std::string>& argv) {
  std::string line = "   $ " + prefix;
  for (const auto& arg : argv) line += (&arg == &argv.front() ? "" : " ") + shell_word(arg);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// fork + execvp with stdout through a pipe: passed through to ours as it comes, and kept.
Run run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  Run result;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;  // built before fork: the child only assigns and execs
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    std::perror("curlretry demo: pipe");
    return result;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
    environ = envp.data();
    ::execvp(args[0], args.data());
    const char* why = std::strerror(errno);
    // Only async-signal-safe calls here: the parent has server threads.
    const char* parts[] = {"curlretry demo: cannot run '", args[0], "': ", why, "\n"};
    for (const char* s : parts) {
      if (::write(STDERR_FILENO, s, std::strlen(s)) < 0) break;
    }
    ::_exit(127);
  }
  ::close(out[1]);
  if (pid < 0) {
    std::perror("curlretry demo: fork");
    ::close(out[0]);
    return result;
  }
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::fwrite(buffer, 1, static_cast<std::size_t>(n), stdout);
    std::fflush(stdout);
    result.out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!result.out.empty() && result.out.back() != '\n') std::printf("\n");  // keep our lines apart
  return result;
}

// A temporary file holding the upstream's certificate, removed when the demo ends.
struct CertFile {
  std::string path;
  ~CertFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
  bool write(const std::string& pem) {
    const char* dir = std::getenv("TMPDIR");
    std::string name = std::string(dir && *dir ? dir : "/tmp") + "/curlretry-demo-XXXXXX.pem";
    int fd = ::mkstemps(name.data(), 4);
    if (fd < 0) return false;
    path = name;
    bool ok = ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
    return ::close(fd) == 0 && ok;
  }
};

}  // namespace

int run_demo(const DemoOptions& options) {
  if (options.library.empty() || ::access(options.library.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "curlretry demo: cannot read the library '%s'; is curlretry installed?\n",
                 options.library.c_str());
    return 1;
  }

  upstream::FlakyUpstream server;
  upstream::FlakyUpstream::Options server_options;
  server_options.tls = options.tls;
  std::string error;
  if (!server.start(server_options, &error)) {
    std::fprintf(stderr, "curlretry demo: cannot start the flaky upstream: %s\n", error.c_str());
    return 1;
  }
  CertFile cert;
  if (options.tls && !cert.write(server.certificate_pem())) {
    std::fprintf(stderr, "curlretry demo: cannot write the upstream's certificate: %s\n", std::strerror(errno));
    return 1;
  }

  const std::string script = "/503,503,200";
  const std::string origin = (options.tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(server.port());
  auto curl_argv = [&](const std::string& key) {
    std::vector<std::string> argv = {options.curl, "-sS", "--max-time", "20"};
    if (options.tls) argv.insert(argv.end(), {"--cacert", cert.path});
    argv.push_back(origin + "/s/" + key + script);
    return argv;
  };

  std::printf("curlretry demo: a flaky upstream on %s answers 503, 503, then 200.\n\n", origin.c_str());

  // 1. The program as it is: it gets the first answer, the 503.
  const std::string plain_preload = preload_without_us(options.library);
  std::vector<std::string> drop = {"LD_PRELOAD"};
  std::vector<std::string> add;
  if (!plain_preload.empty()) add.push_back("LD_PRELOAD=" + plain_preload);
  std::printf("1. Without curlretry\n");
  print_command("", curl_argv("demo-plain"));
  Run plain = run(curl_argv("demo-plain"), environment(drop, add));
  const std::uint64_t plain_count = server.count("demo-plain");
  if (plain.status == 127 && plain_count == 0) {
    std::fprintf(stderr, "curlretry demo: could not run %s; install curl or pass --curl PATH\n", options.curl.c_str());
    return 1;
  }
  std::printf("   -> curl exited %d and printed the first answer it got; the upstream saw %s.\n\n",
              plain.status, core::counted(static_cast<long long>(plain_count), "request", "requests").c_str());

  // 2. The same program with the library preloaded, built-in policy.
  const std::string preload = options.library + (plain_preload.empty() ? "" : ":" + plain_preload);
  for (std::string& variable : policy_overrides()) drop.push_back(std::move(variable));
  add = {"LD_PRELOAD=" + preload};
  std::printf("2. With curlretry (retry lines on stderr start with \"curlretry:\")\n");
  std::printf("   The built-in policy waits 1500 ms, then 3000 ms: this takes about 4.5 s.\n");
  print_command(shell_word("LD_PRELOAD=" + preload) + " ", curl_argv("demo-retry"));
  Run retried = run(curl_argv("demo-retry"), environment(drop, add));
  const std::uint64_t retry_count = server.count("demo-retry");
  std::printf("   -> curl exited %d after %.1f s; the upstream saw %s.\n\n", retried.status, retried.seconds,
              core::counted(static_cast<long long>(retry_count), "request", "requests").c_str());

  server.stop();
  const std::string ok = "ok key=demo-retry attempt=" + std::to_string(retry_count) + "\n";
  const bool plain_failed = plain.out.rfind("ok ", 0) != 0;
  const bool retry_succeeded = retried.status == 0 && retried.out == ok;
  if (plain_failed && retry_succeeded) {
    std::printf("Result: without curlretry curl handed its user the 503; with it, the 200 -- same curl,\n"
                "same command, no code or URL changed.\n");
    return 0;
  }
  std::printf("Result: unexpected. %s%s\n", plain_failed ? "" : "The plain run did not get the 503. ",
              retry_succeeded ? "" : "The run under curlretry did not end with exit 0 and the 200 body.");
  return 1;
}

}  // namespace curlretry::cli
