// `curlretry`: argument parsing and dispatch only; each command lives in its own file
// (subcommands.cpp declares their arguments).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/launch.h"
#include "cli/launch_auto.h"
#include "cli/proxy_exec.h"
#include "cli/subcommands.h"
#include "cli/usage.h"
#include "config/keys.h"

namespace {

using namespace curlretry::cli;

constexpr const char* kLaunchUsage =
    "[-n N] [--base-ms MS] [--max-delay-ms MS] [--jitter KIND] [-q|-v] [--log-file F] [--events F] "
    "[--config F]... [--] COMMAND [ARGS...]";

// "TEXT (VARIABLE)" or "TEXT (VARIABLE=VALUE)": a flag's help names the variable it sets as
// config/keys.h names it (launch.cpp sets the same one).
std::string sets(std::string_view text, std::string_view variable, std::string_view value = {}) {
  return std::string(text) + " (" + std::string(variable) + (value.empty() ? "" : "=") + std::string(value) + ")";
}

// The launcher's flags, on the bare form and on `run`. Each sets the CURLRETRY_* variable of the
// same setting, so `check` shows it as the source and the command's own children inherit it.
void add_launch_options(CLI::App& app, LaunchOptions& launch) {
  using curlretry::config::env_of;
  app.add_option("-n,--max-attempts", launch.max_attempts,
                 sets("All attempts, first included; -1 = until max_elapsed_ms", env_of("max_attempts")))
      ->type_name("N");
  app.add_option("--base-ms", launch.base_ms, sets("First backoff delay", env_of("backoff.base_ms")))->type_name("MS");
  app.add_option("--max-delay-ms", launch.max_delay_ms, sets("Longest backoff delay", env_of("backoff.max_ms")))
      ->type_name("MS");
  app.add_option("--jitter", launch.jitter, sets("none, full, equal or decorrelated", env_of("backoff.jitter")))
      ->type_name("KIND");
  app.add_flag("-q,--quiet", launch.quiet,
               sets("Log only give-ups and errors, and say nothing about the command", env_of("log"), "warn"));
  app.add_flag("-v,--verbose", launch.verbose,
               sets("Log every decision, first-try successes too", env_of("log"), "debug"));
  app.add_option("--log-file", launch.log_file, sets("Append log lines here instead of stderr", env_of("log_file")))
      ->type_name("FILE");
  app.add_option("--events", launch.events, sets("Append one JSON line per attempt", env_of("events_file")))
      ->type_name("FILE");
  app.add_option("--config", launch.configs, "Config file; repeat to combine presets, later wins "
                 "(CURLRETRY_CONFIG)")->type_name("FILE")->allow_extra_args(false);
  app.add_flag("--proxy", launch.proxy, "Run COMMAND through the shared local proxy (curlretry proxy --ensure), "
               "for programs that never load libcurl: each proxy.routes env variable set to its route");
  app.add_option("--listen", launch.listen, "With --proxy: the shared proxy's address (default 127.0.0.1:7878)")
      ->type_name("HOST:PORT");
  app.add_flag("--no-proxy", launch.no_proxy, "Preload only, even for a COMMAND that will not load libcurl (by "
               "default that one runs through the shared proxy, its providers' hosts intercepted)");
}

// The launcher: the bare form and `run` (the same flags); `proxy` is listed for --help only, as
// main() hands it to curlretry-proxy before parsing.
CLI::App* add_launcher(CLI::App& app, LaunchOptions& launch) {
  add_common(app);
  set_usage(app, std::string("curlretry ") + kLaunchUsage + "\n       curlretry " + kProxyLaunchUsage +
                     "\n       curlretry SUBCOMMAND [OPTIONS] [ARGS...]");
  app.require_subcommand(0, 1);
  // The launcher form takes the command as everything from the first positional on (or after
  // `--`), so the command's own options are never parsed as ours.
  add_launch_options(app, launch);
  app.prefix_command();
  CLI::App* run = app.add_subcommand("run", "Run COMMAND with curlretry preloaded (same as the bare form)");
  add_common(*run);
  set_usage(*run, std::string("curlretry run ") + kLaunchUsage);
  add_launch_options(*run, launch);
  run->prefix_command();
  app.add_subcommand("proxy", "Run the local retrying proxy for programs without libcurl (curlretry proxy --help)");
  return run;
}

void add_footer(CLI::App& app) {
  app.footer(
      "Examples:\n"
      "  curlretry -n 5 -- curl -sS https://api.example.com/v1/models\n"
      "  curlretry --config base.yaml --config ./zai.yaml -- ./agent.sh\n"
      "  curlretry -- claude -p \"hello\"    (no libcurl inside: through the shared local proxy, no config)\n"
      "  curlretry --proxy -- node agent.js    (the same, with the config's proxy.routes and proxy.intercept)\n"
      "  curlretry check ./curlretry.yaml\n"
      "  curlretry explain --json POST https://open.bigmodel.cn/api/paas/v4/chat/completions --status 429\n"
      "  curlretry doctor python3 agent.py\n"
      "  curlretry --events /tmp/attempts.jsonl -- ./agent.sh; curlretry stats /tmp/attempts.jsonl\n"
      "Exit status of the launcher: the command's own; 125 curlretry's error, 126 the command cannot run,\n"
      "127 the command was not found.\n"
      "Configuration: $CURLRETRY_CONFIG, $XDG_CONFIG_HOME/curlretry/config.yaml,\n"
      "~/.config/curlretry/config.yaml, /etc/curlretry/config.yaml; see curlretry.yaml(5) and curlretry(1).");
}

// The command line split at the first `--`: everything after it is the command, verbatim. CLI11
// is not trusted with it: it would still recognise a command named `check` or `run` as one of ours.
struct Words {
  std::vector<std::string> before;
  std::vector<std::string> after;
  bool separator = false;
};

Words split_at_separator(int argc, char** argv) {
  Words words;
  for (int i = 1; i < argc; ++i) {
    if (!words.separator && std::string_view(argv[i]) == "--") {
      words.separator = true;
    } else {
      (words.separator ? words.after : words.before).emplace_back(argv[i]);
    }
  }
  return words;
}

// Parses; an exit status when the parse ends the run (help, version, a usage error).
std::optional<int> parse(CLI::App& app, CLI::App* run, const std::vector<Subcommand>& subcommands, Words words,
                         const UsageFailure& usage_failure) {
  std::reverse(words.before.begin(), words.before.end());  // CLI11 takes the arguments as a reversed vector
  try {
    app.parse(words.before);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App& failed = failed_command(app);
    return usage_failure(failed, describe_parse_error(e, failed));
  }
  // The launcher and doctor take everything from the first word that is not theirs; an option
  // there, before any `--`, is one of ours misspelt.
  std::vector<CLI::App*> takers{&app, run};
  for (const Subcommand& s : subcommands) {
    if (s.after_separator == AfterSeparator::command) takers.push_back(s.app);
  }
  for (CLI::App* command : takers) {
    if (command != &app && !command->parsed()) continue;
    const std::vector<std::string> rest = command->remaining();
    if (!rest.empty() && rest.front().size() > 1 && rest.front()[0] == '-') {
      return usage_failure(*command, describe_extra(rest.front()));
    }
  }
  for (const Subcommand& s : subcommands) {
    if (words.separator && s.after_separator == AfterSeparator::refused && s.app->parsed()) {
      return usage_failure(failed_command(app), "unexpected `--`: only the launcher and doctor take a command");
    }
  }
  return std::nullopt;
}

int run_launcher(LaunchOptions& launch, const CLI::App& app, CLI::App* run, const Words& words,
                 const UsageFailure& usage_failure) {
  launch.command = run->parsed() ? run->remaining() : app.remaining();
  // `curlretry curl -- x`: the `--` was the command's own argument.
  if (words.separator && !launch.command.empty()) launch.command.emplace_back("--");
  launch.command.insert(launch.command.end(), words.after.begin(), words.after.end());
  if (launch.quiet && launch.verbose) return usage_failure(run->parsed() ? *run : app, "-q and -v contradict");
  if (launch.command.empty()) return usage_failure(run->parsed() ? *run : app, "no command to run");
  if (!launch.proxy && !launch.no_proxy) {
    if (auto path = proxy_path(launch.command)) {
      launch.proxy_reason = path->reason;
      launch.base_url_routes = path->base_url_routes;
    }
  }
  if (auto conflict = proxy_conflict(launch)) return usage_failure(run->parsed() ? *run : app, *conflict);
  return run_launch(launch);
}

}  // namespace

int main(int argc, char** argv) {
  // `curlretry proxy ...` belongs to curlretry-proxy, options and all.
  if (argc >= 2 && std::string_view(argv[1]) == "proxy") return exec_proxy(argc, argv);
  CLI::App app{"Retries transient libcurl failures (503, 429, 529, captcha 400, resets) of an unmodified "
               "program, by preloading libcurlretry.so.",
               "curlretry"};
  app.formatter(std::make_shared<UsageFormatter>());
  LaunchOptions launch;
  CLI::App* run = add_launcher(app, launch);
  const std::vector<Subcommand> subcommands = add_subcommands(app);
  add_footer(app);  // last: subcommands copy their parent's footer when created
  if (argc <= 1) {
    std::cerr << app.help();
    return kLaunchError;
  }
  const Words words = split_at_separator(argc, argv);
  // A usage error of the launcher is its own failure (125, as `env` and `timeout`); of a
  // subcommand, 2.
  const UsageFailure usage_failure = [&](const CLI::App& command, const std::string& problem) {
    std::cerr << usage_error(command, problem);
    return &command == &app || &command == run ? kLaunchError : 2;
  };
  if (const auto status = parse(app, run, subcommands, words, usage_failure)) return *status;
  try {
    for (const Subcommand& s : subcommands) {
      if (s.app->parsed()) return s.run(words.after, usage_failure);
    }
    return run_launcher(launch, app, run, words, usage_failure);
  } catch (const std::exception& e) {
    std::cerr << "curlretry: " << e.what() << '\n';
    return 1;
  }
}
