// `curlretry`: argument parsing and dispatch only; each command lives in its own file.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <tuple>
#include <iostream>
#include <string_view>

#include "cli/check.h"
#include "cli/demo.h"
#include "cli/doctor.h"
#include "cli/explain.h"
#include "cli/fleet.h"
#include "cli/launch.h"
#include "cli/library_path.h"
#include "cli/proxy_exec.h"
#include "cli/stats.h"
#include "cli/usage.h"

#ifndef CURLRETRY_VERSION
#define CURLRETRY_VERSION "unknown"
#endif

namespace {

using namespace curlretry::cli;

constexpr const char* kVersion = "curlretry " CURLRETRY_VERSION;

// Every subcommand but the launcher's `run` and `doctor` (which take a command) is strict: an
// unknown option or an extra argument is an error, never ignored.
void add_common(CLI::App& app) {
  app.set_version_flag("--version", kVersion, "Print the version and exit");
  app.set_help_flag("-h,--help", "Print this help and exit");
  if (app.get_parent() != nullptr) make_strict(app);
}

constexpr const char* kLaunchUsage =
    "[-n N] [--base-ms MS] [--max-delay-ms MS] [--jitter KIND] [-q|-v] [--log-file F] [--events F] "
    "[--config F]... [--] COMMAND [ARGS...]";

// The launcher's flags, on the bare form and on `run`. Each sets the CURLRETRY_* variable of the
// same setting, so `check` shows it as the source and the command's own children inherit it.
void add_launch_options(CLI::App& app, LaunchOptions& launch) {
  app.add_option("-n,--max-attempts", launch.max_attempts, "All attempts, first included; -1 = until "
                 "max_elapsed_ms (CURLRETRY_MAX_ATTEMPTS)")->type_name("N");
  app.add_option("--base-ms", launch.base_ms, "First backoff delay (CURLRETRY_BASE_MS)")->type_name("MS");
  app.add_option("--max-delay-ms", launch.max_delay_ms, "Longest backoff delay (CURLRETRY_MAX_DELAY_MS)")
      ->type_name("MS");
  app.add_option("--jitter", launch.jitter, "none, full, equal or decorrelated (CURLRETRY_JITTER)")
      ->type_name("KIND");
  app.add_flag("-q,--quiet", launch.quiet, "Log only give-ups and errors, and say nothing about the command "
               "(CURLRETRY_LOG=warn)");
  app.add_flag("-v,--verbose", launch.verbose, "Log every decision, first-try successes too (CURLRETRY_LOG=debug)");
  app.add_option("--log-file", launch.log_file, "Append log lines here instead of stderr (CURLRETRY_LOG_FILE)")
      ->type_name("FILE");
  app.add_option("--events", launch.events, "Append one JSON line per attempt (CURLRETRY_EVENTS)")
      ->type_name("FILE");
  app.add_option("--config", launch.configs, "Config file; repeat to combine presets, later wins "
                 "(CURLRETRY_CONFIG)")->type_name("FILE")->allow_extra_args(false);
  app.add_flag("--proxy", launch.proxy, "Run COMMAND through the shared local proxy (curlretry proxy --ensure), "
               "for programs that never load libcurl: each proxy.routes env variable set to its route");
  app.add_option("--listen", launch.listen, "With --proxy: the shared proxy's address (default 127.0.0.1:7878)")
      ->type_name("HOST:PORT");
}

int run_demo_command(const std::string& curl, bool tls) {
#ifdef CURLRETRY_HAVE_DEMO
  const LibraryLookup library = find_library();
  if (!library.path) {
    std::cerr << "curlretry: " << library.error << '\n';
    return 1;
  }
  DemoOptions options;
  options.curl = curl;
  options.library = *library.path;
  options.tls = tls;
  return run_demo(options);
#else
  (void)curl;
  (void)tls;
  std::cerr << "curlretry: this build has no demo (the flaky upstream was not built)\n";
  return 1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  // `curlretry proxy ...` belongs to curlretry-proxy, options and all.
  if (argc >= 2 && std::string_view(argv[1]) == "proxy") return exec_proxy(argc, argv);
  CLI::App app{"Retries transient libcurl failures (503, 429, 529, captcha 400, resets) of an unmodified "
               "program, by preloading libcurlretry.so.",
               "curlretry"};
  app.formatter(std::make_shared<UsageFormatter>());
  add_common(app);
  set_usage(app, std::string("curlretry ") + kLaunchUsage + "\n       curlretry " + kProxyLaunchUsage +
                     "\n       curlretry SUBCOMMAND [OPTIONS] [ARGS...]");
  app.require_subcommand(0, 1);

  // The launcher form takes the command as everything from the first positional on (or after
  // `--`), so the command's own options are never parsed as ours.
  LaunchOptions launch;
  add_launch_options(app, launch);
  app.prefix_command();

  CLI::App* run = app.add_subcommand("run", "Run COMMAND with curlretry preloaded (same as the bare form)");
  add_common(*run);
  set_usage(*run, std::string("curlretry run ") + kLaunchUsage);
  add_launch_options(*run, launch);
  run->prefix_command();

  // Listed for --help only: main() hands `proxy` to curlretry-proxy before parsing.
  app.add_subcommand("proxy", "Run the local retrying proxy for programs without libcurl (curlretry proxy --help)");
  std::vector<std::string> check_files;
  std::vector<std::string> check_positional;  // CLI11 assigns per option: one vector each
  CLI::App* check = app.add_subcommand("check", "Validate the config and print the effective policy with sources");
  add_common(*check);
  set_usage(*check, "curlretry check [--json] [--config FILE]... [FILE...]");
  bool check_json = false;
  check->add_flag("--json", check_json, "Print one JSON object: ok, files, settings, defaults, rules, warnings");
  check->add_option("--config", check_files, "Config file (default: the usual search)")
      ->type_name("FILE")->allow_extra_args(false);
  check->add_option("FILE", check_positional, "Config file, as --config FILE (after the --config ones)")
      ->type_name("FILE");

  ExplainOptions ex;
  std::string explain_config;
  CLI::App* explain = app.add_subcommand("explain", "Show what curlretry decides for one attempt's outcome");
  add_common(*explain);
  set_usage(*explain, "curlretry explain [--json] [--config FILE] [--status N] [--header 'K: V']... "
                      "[--body TEXT|@FILE] [--transport KIND] [--attempt N] [OPTIONS] METHOD URL");
  explain->add_option("--config", explain_config, "Config file (default: the usual search)")->type_name("FILE");
  explain->add_flag("--json", ex.json, "Print one JSON object: verdict, delay_ms, reason, rule, what");
  explain->add_option("METHOD", ex.method, "HTTP method, e.g. POST")->required();
  explain->add_option("URL", ex.url, "Request URL")->required();
  explain->add_option("--status", ex.status, "HTTP status the attempt got")->type_name("N")
      ->check(whole_number(0));
  std::string body;
  explain->add_option("--body", body, "Response body, or @FILE, or @- for stdin")->type_name("TEXT|@FILE");
  explain->add_option("--header", ex.headers,
                      "Header 'Name: value' (repeatable): picks rules by match.header; Retry-After, "
                      "Retry-After-Ms and X-Should-Retry are read as the response's")
      ->type_name("'K: V'")
      ->allow_extra_args(false);
  explain->add_option("--transport", ex.transport, "Transport outcome: ok, connect_refused, reset, send, recv, "
                                                   "empty_reply, tls_handshake, http2_stream, timeout, host_abort, "
                                                   "bad_argument, other")
      ->type_name("KIND");
  explain->add_option("--attempt", ex.attempt, "1-based number of the attempt that just ended (default 1)")
      ->type_name("N")->check(whole_number(1));
  explain->add_option("--elapsed-ms", ex.elapsed_ms, "Time since the transfer began (default 0)")->type_name("MS")
      ->check(whole_number(0));
  explain->add_option("--previous-delay-ms", ex.previous_delay_ms, "Delay chosen before this attempt (jitter)")
      ->type_name("MS")->check(whole_number(0));
  explain->add_flag("--committed", ex.committed, "A body byte already reached the host");
  explain->add_flag("--not-replayable", ex.not_replayable, "The upload cannot be rewound");

  std::string curl = "curl";
  bool tls = false;
  CLI::App* demo = app.add_subcommand("demo", "Run curl against a flaky local server without and with curlretry");
  add_common(*demo);
  set_usage(*demo, "curlretry demo [--tls] [--curl PATH]");
  demo->add_flag("--tls", tls, "Use HTTPS on loopback (certificate generated on the fly)");
  demo->add_option("--curl", curl, "The curl binary to run (default: curl from PATH)")->type_name("PATH");

  DoctorOptions doctor_options;
  CLI::App* doctor = app.add_subcommand("doctor", "Say whether curlretry can reach a program's libcurl, and why");
  add_common(*doctor);
  set_usage(*doctor, "curlretry doctor [--json] [--] COMMAND|PATH [ARGS...]");
  doctor->add_flag("--json", doctor_options.json, "Print one JSON object: verdict, program, chain, via, libcurl, "
                                                   "flavour, summary, details, advice");
  doctor->footer("Exit status: 0 works, 3 not reachable or LD_PRELOAD ignored, 4 nothing to do, 5 maybe, 1 error.");
  doctor->prefix_command();

  StatsOptions stats_options;
  std::string bucket;
  CLI::App* stats = app.add_subcommand("stats", "Summarise attempt logs written with CURLRETRY_EVENTS=FILE");
  add_common(*stats);
  set_usage(*stats, "curlretry stats [--json] [--since TIME] [--until TIME] [--processes] [--bucket DURATION] "
                    "[--width N] FILE...");
  std::string since, until;
  stats->add_flag("--json", stats_options.json, "Print one JSON object: totals per host and process, reasons");
  stats->add_option("--since", since, "Only attempts from TIME: 2025-06-01T12:00:00Z, 2025-06-01, or 2h (ago)")
      ->type_name("TIME");
  stats->add_option("--until", until, "Only attempts before TIME (same forms)")->type_name("TIME");
  stats->add_flag("--processes", stats_options.processes, "Also a table per process (pid, program)");
  stats->add_option("FILE", stats_options.files, "Attempt logs (- = stdin)")->required()->type_name("FILE");
  stats->add_option("--bucket", bucket, "Time per row of the chart: 30s, 5m, 1h, 1d (default: fit 24 rows)")
      ->type_name("DURATION");
  stats->add_option("--width", stats_options.width, "Widest bar in characters (default 50)")->type_name("N")
      ->check(whole_number(1));

  FleetOptions fleet_options;
  CLI::App* fleet = add_fleet_command(app, fleet_options);
  add_common(*fleet);
  set_usage(*fleet, "curlretry fleet [--json] [--watch [--interval S] [--count N]] [--clear KEY] [--config FILE]");

  // Set last: subcommands copy their parent's footer when created.
  app.footer(
      "Examples:\n"
      "  curlretry -n 5 -- curl -sS https://api.example.com/v1/models\n"
      "  curlretry --config base.yaml --config ./zai.yaml -- ./agent.sh\n"
      "  curlretry --proxy -- node agent.js    (no libcurl inside: through the shared local proxy)\n"
      "  curlretry check ./curlretry.yaml\n"
      "  curlretry explain --json POST https://open.bigmodel.cn/api/paas/v4/chat/completions --status 429\n"
      "  curlretry doctor python3 agent.py\n"
      "  curlretry --events /tmp/attempts.jsonl -- ./agent.sh; curlretry stats /tmp/attempts.jsonl\n"
      "Exit status of the launcher: the command's own; 125 curlretry's error, 126 the command cannot run,\n"
      "127 the command was not found.\n"
      "Configuration: $CURLRETRY_CONFIG, $XDG_CONFIG_HOME/curlretry/config.yaml,\n"
      "~/.config/curlretry/config.yaml, /etc/curlretry/config.yaml; see curlretry.yaml(5) and curlretry(1).");
  if (argc <= 1) {
    std::cerr << app.help();
    return kLaunchError;
  }
  // Everything after the first `--` is the command, verbatim. CLI11 is not trusted with it: it
  // would still recognise a command named `check` or `run` as one of our subcommands.
  std::vector<std::string> args;
  std::vector<std::string> after;
  bool separator = false;
  for (int i = 1; i < argc; ++i) {
    if (!separator && std::string_view(argv[i]) == "--") {
      separator = true;
    } else {
      (separator ? after : args).emplace_back(argv[i]);
    }
  }
  // A usage error of the launcher is its own failure (125, as `env` and `timeout`); of a
  // subcommand, 2.
  const auto usage_failure = [&](const CLI::App& command, const std::string& problem) {
    std::cerr << usage_error(command, problem);
    return &command == &app || &command == run ? kLaunchError : 2;
  };
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments as a reversed vector
  try {
    app.parse(args);
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
  for (CLI::App* command : {&app, run, doctor}) {
    if (command != &app && !command->parsed()) continue;
    const std::vector<std::string> rest = command->remaining();
    if (!rest.empty() && rest.front().size() > 1 && rest.front()[0] == '-') {
      return usage_failure(*command, describe_extra(rest.front()));
    }
  }
  if (separator && (check->parsed() || explain->parsed() || demo->parsed() || stats->parsed())) {
    return usage_failure(failed_command(app), "unexpected `--`: only the launcher and doctor take a command");
  }

  try {
    if (check->parsed()) {
      std::optional<std::string> files;
      check_files.insert(check_files.end(), check_positional.begin(), check_positional.end());
      for (const auto& file : check_files) {
        if (file.find(':') != std::string::npos) {
          return usage_failure(*check, file + ": a file name with ':' cannot be listed; name it in `include:`");
        }
        files = files ? *files + ":" + file : file;
      }
      return run_check({files, check_json});
    }
    if (explain->parsed()) {
      if (explain->count("--config") > 0) ex.config = explain_config;
      if (explain->count("--body") > 0) ex.body = body;
      return run_explain(ex);
    }
    if (demo->parsed()) return run_demo_command(curl, tls);
    if (fleet->parsed()) return run_fleet(fleet_options);
    if (doctor->parsed()) {
      doctor_options.command = doctor->remaining();
      doctor_options.command.insert(doctor_options.command.end(), after.begin(), after.end());
      if (doctor_options.command.empty()) return usage_failure(*doctor, "missing COMMAND|PATH");
      return run_doctor(doctor_options);
    }
    if (stats->parsed()) {
      if (!bucket.empty()) {
        const auto seconds = parse_bucket(bucket);
        if (!seconds) return usage_failure(*stats, "--bucket " + bucket + ": expected a duration such as 30s, 5m, 1h");
        stats_options.bucket_seconds = *seconds;
      }
      const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch()).count();
      for (auto [flag, text, bound] : {std::tuple{"--since", &since, &stats_options.since_ms},
                                       std::tuple{"--until", &until, &stats_options.until_ms}}) {
        if (text->empty()) continue;
        *bound = parse_time_bound(*text, now_ms);
        if (!*bound) {
          return usage_failure(*stats, std::string(flag) + " " + *text +
                                           ": expected a UTC time such as 2025-06-01T12:00:00Z, a date, or 2h");
        }
      }
      return run_stats(stats_options);
    }
    launch.command = run->parsed() ? run->remaining() : app.remaining();
    // `curlretry curl -- x`: the `--` was the command's own argument.
    if (separator && !launch.command.empty()) launch.command.emplace_back("--");
    launch.command.insert(launch.command.end(), after.begin(), after.end());
    if (launch.quiet && launch.verbose) return usage_failure(run->parsed() ? *run : app, "-q and -v contradict");
    if (launch.command.empty()) return usage_failure(run->parsed() ? *run : app, "no command to run");
    if (auto conflict = proxy_conflict(launch)) return usage_failure(run->parsed() ? *run : app, *conflict);
    return run_launch(launch);
  } catch (const std::exception& e) {
    std::cerr << "curlretry: " << e.what() << '\n';
    return 1;
  }
}
