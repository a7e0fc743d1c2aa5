#include "cli/launch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "cli/library_path.h"
#include "cli/proxy_exec.h"
#include "cli/reach_watch.h"
#include "config/config.h"
#include "config/include_merge.h"
#include "config/keys.h"

namespace curlretry::cli {

std::vector<FlagVariable> flag_variables(const LaunchOptions& options) {
  std::vector<FlagVariable> out;
  // Each flag sets the variable of one key of config/keys.h.
  const auto add = [&out](const char* flag, std::string_view variable, const std::optional<std::string>& value) {
    if (value) out.push_back({flag, std::string(variable), *value});
  };
  using config::env_of;
  add("--max-attempts", env_of("max_attempts"), options.max_attempts);
  add("--base-ms", env_of("backoff.base_ms"), options.base_ms);
  add("--max-delay-ms", env_of("backoff.max_ms"), options.max_delay_ms);
  add("--jitter", env_of("backoff.jitter"), options.jitter);
  if (options.verbose) add("-v", env_of("log"), "debug");
  // On the automatic path -q silences the launch's line only: the shared proxy logs to its file,
  // and a log level here would make it another config (restarted between quiet and other runs).
  if (options.quiet && !options.proxy_reason) add("-q", env_of("log"), "warn");
  add("--log-file", env_of("log_file"), options.log_file);
  add("--events", env_of("events_file"), options.events);
  return out;
}

std::string name_the_flag(const std::string& error, const std::vector<FlagVariable>& flags) {
  for (const FlagVariable& f : flags) {
    const std::string prefix = f.variable + "=";
    if (error.rfind(prefix, 0) == 0) return f.flag + " " + error.substr(prefix.size());
  }
  return error;
}

std::optional<std::string> stacking_warning(const std::vector<std::string>& command, int max_attempts) {
  if (command.empty() || std::filesystem::path(command[0]).filename() != "curl") return std::nullopt;
  long long retries = 0;  // 0: no --retry, or one curl refuses anyway
  bool all_errors = false;
  for (std::size_t i = 1; i < command.size(); ++i) {
    if (command[i] == "--") break;
    if (command[i] == "--retry-all-errors") all_errors = true;
    if (command[i] == "--retry" && i + 1 < command.size()) {
      try {
        retries = std::stoll(command[i + 1]);
      } catch (const std::exception&) {
        retries = 0;
      }
    }
  }
  if (retries <= 0 && !all_errors) return std::nullopt;
  std::string line = "curl " + (retries > 0 ? "--retry " + std::to_string(retries) : "--retry-all-errors") +
                     " retries on top of curlretry: ";
  if (retries > 0 && retries < 1000000 && max_attempts > 0) {
    line += "one failing request can be sent up to " + std::to_string(retries + 1) + " x " +
            std::to_string(max_attempts) + " = " + std::to_string((retries + 1) * max_attempts) + " times";
  } else {
    line += "the attempts of the two layers multiply";
  }
  return line + "; drop curl's --retry or run curlretry -n 1";
}

std::optional<std::string> proxy_conflict(const LaunchOptions& options) {
  if (options.proxy && options.no_proxy) return std::string("--proxy and --no-proxy contradict");
  if (!options.proxy) {
    if (options.listen && !options.proxy_reason) {
      return std::string("--listen needs --proxy (it names the shared proxy's address)");
    }
    return std::nullopt;
  }
  std::string flag;
  if (options.max_attempts) flag = "-n";
  else if (options.base_ms) flag = "--base-ms";
  else if (options.max_delay_ms) flag = "--max-delay-ms";
  else if (options.jitter) flag = "--jitter";
  else if (options.quiet) flag = "-q";
  else if (options.verbose) flag = "-v";
  else if (options.log_file) flag = "--log-file";
  else if (options.events) flag = "--events";
  if (flag.empty()) return std::nullopt;
  // The proxy is shared and may already run: a flag here could not reach it, only COMMAND's own
  // libcurl children, so the two would follow different policies without a word.
  return "--proxy and " + flag + " cannot be used together: the shared proxy takes its settings from its config "
         "file (--config F)";
}

namespace {

// `curlretry --proxy -- COMMAND`: curlretry-proxy ensures the shared proxy, sets each route's
// variable and runs COMMAND with the preload still in place for its libcurl children. On the
// automatic path the built-in providers are intercepted too, and the one line says why.
int launch_through_proxy(const LaunchOptions& options, const config::Config& config) {
  std::vector<std::string> args{"--ensure"};
  if (options.proxy_reason) {
    args.insert(args.end(), {"--builtin-providers", "--reason",
                             *options.proxy_reason + ": its requests to the providers curlretry knows go through "
                             "the proxy (HTTPS_PROXY and the local CA; --no-proxy runs it directly)"});
  }
  if (options.base_url_routes) args.emplace_back("--builtin-routes");
  if (options.proxy_reason) args.emplace_back("--or-direct");
  if (options.quiet) args.emplace_back("--quiet");
  if (options.listen) args.insert(args.end(), {"--listen", *options.listen});
  if (!options.configs.empty()) {
    std::string list;
    for (const std::string& file : config::split_config_list(config.file)) {
      std::error_code ec;
      const auto absolute = std::filesystem::absolute(file, ec);
      list += (list.empty() ? "" : ":") + (ec ? file : absolute.lexically_normal().string());
    }
    args.insert(args.end(), {"--config", list});
  }
  args.emplace_back("--");
  args.insert(args.end(), options.command.begin(), options.command.end());
  std::cout.flush();
  exec_proxy(args);
  return kLaunchError;
}

}  // namespace

int run_launch(const LaunchOptions& options) {
  if (options.command.empty()) {
    std::cerr << "curlretry: no command to run\nUsage: curlretry [OPTIONS] [--] COMMAND [ARGS...]\n"
                 "Run 'curlretry --help' for more.\n";
    return kLaunchError;
  }
  // Several files reach the library as CURLRETRY_CONFIG=A:B (config/include_merge.h), so a
  // name with ':' cannot be one of them; `include:` from a file can name it.
  for (const std::string& file : options.configs) {
    if (file.find(':') != std::string::npos) {
      std::cerr << "curlretry: --config " << file << ": a file name with ':' cannot be passed on; name it in "
                   "another file's `include:`\n";
      return kLaunchError;
    }
  }
  // The flags become the variables of the same settings before anything reads the environment,
  // so the config is validated with them and the child inherits them.
  const std::vector<FlagVariable> flags = flag_variables(options);
  for (const FlagVariable& f : flags) ::setenv(f.variable.c_str(), f.value.c_str(), 1);
  std::optional<std::string> config;
  for (const std::string& file : options.configs) config = config ? *config + ":" + file : file;
  const config::LoadResult loaded = config::load(config::Environment::process(), config);
  for (const auto& warning : loaded.warnings) std::cerr << "curlretry: warning: " << warning << '\n';
  if (!loaded.ok()) {
    std::cerr << "curlretry: " << name_the_flag(loaded.error, flags) << '\n';
    return kLaunchError;
  }

  if (options.proxy || options.proxy_reason) return launch_through_proxy(options, *loaded.config);

  if (!options.quiet) {
    if (auto warning = stacking_warning(options.command, loaded.config->defaults.max_attempts)) {
      std::cerr << "curlretry: warning: " << *warning << '\n';
    }
  }

  const LibraryLookup library = find_library();
  if (!library.path) {
    std::cerr << "curlretry: " << library.error << '\n';
    return kLaunchError;
  }
  if (library.path->find_first_of(": ") != std::string::npos) {
    std::cerr << "curlretry: " << *library.path << ": LD_PRELOAD cannot carry a path with ':' or ' '\n";
    return kLaunchError;
  }

  // Children may chdir or change HOME; an absolute path keeps them on the file validated here.
  if (!loaded.config->file.empty()) {
    std::string list;
    for (const std::string& file : config::split_config_list(loaded.config->file)) {
      std::error_code ec;
      const auto absolute = std::filesystem::absolute(file, ec);
      list += (list.empty() ? "" : ":") + (ec ? file : absolute.lexically_normal().string());
    }
    ::setenv("CURLRETRY_CONFIG", list.c_str(), 1);
  }
  const std::string preload = prepend_preload(*library.path, std::getenv("LD_PRELOAD"));
  ::setenv("LD_PRELOAD", preload.c_str(), 1);

  std::vector<char*> argv;
  argv.reserve(options.command.size() + 1);
  for (const auto& arg : options.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  std::optional<ReachWatch> watch;
  if (!options.quiet) watch = start_reach_watch(options.command, options.configs);
  ::execvp(argv[0], argv.data());

  // Same exit codes as a shell: 127 not found, 126 found but not runnable.
  const int e = errno;
  if (watch) cancel_reach_watch(*watch);
  if (e == ENOENT || e == ENOTDIR) {
    std::cerr << "curlretry: " << options.command[0] << ": command not found\n";
    return kCommandNotFound;
  }
  std::cerr << "curlretry: " << options.command[0] << ": " << std::error_code(e, std::generic_category()).message()
            << '\n';
  return kCannotExecute;
}

}  // namespace curlretry::cli
