// `curlretry`: argument parsing and dispatch only; each command lives in its own file.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <string_view>

#include "cli/check.h"
#include "cli/demo.h"
#include "cli/doctor.h"
#include "cli/explain.h"
#include "cli/launch.h"
#include "cli/library_path.h"
#include "cli/proxy_exec.h"
#include "cli/stats.h"

#ifndef CURLRETRY_VERSION
#define CURLRETRY_VERSION "unknown"
#endif

namespace {

using namespace curlretry::cli;

constexpr const char* kVersion = "curlretry " CURLRETRY_VERSION;

void add_common(CLI::App& app) {
  app.set_version_flag("--version", kVersion, "Print the version and exit");
  app.set_help_flag("-h,--help", "Print this help and exit");
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
               "program, by preloading libcurlretry.so.\n\n"
               "  curlretry [--config F] [-v] [--] COMMAND [ARGS...]\n"
               "  curlretry SUBCOMMAND [OPTIONS]\n",
               "curlretry"};
  add_common(app);
  app.require_subcommand(0, 1);

  // The launcher form takes the command as everything from the first positional on (or after
  // `--`), so the command's own options are never parsed as ours.
  LaunchOptions launch;
  std::string config_path;
  app.add_option("--config", config_path, "Config file to validate and pass to the command")
      ->type_name("FILE");
  app.add_flag("-v,--verbose", launch.verbose, "Log every decision (CURLRETRY_LOG=debug)");
  app.prefix_command();

  CLI::App* run = app.add_subcommand("run", "Run COMMAND with curlretry preloaded (same as the bare form)");
  add_common(*run);
  run->footer("Usage: curlretry run [--config F] [-v] [--] COMMAND [ARGS...]");
  run->add_option("--config", config_path, "Config file to validate and pass to the command")->type_name("FILE");
  run->add_flag("-v,--verbose", launch.verbose, "Log every decision (CURLRETRY_LOG=debug)");
  run->prefix_command();

  // Listed for --help only: main() hands `proxy` to curlretry-proxy before parsing.
  app.add_subcommand("proxy", "Run the local retrying proxy for programs without libcurl (curlretry proxy --help)");
  CLI::App* check = app.add_subcommand("check", "Validate the config and print the effective policy with sources");
  add_common(*check);
  check->add_option("--config", config_path, "Config file (default: the usual search)")->type_name("FILE");

  ExplainOptions ex;
  CLI::App* explain = app.add_subcommand("explain", "Show what curlretry decides for one attempt's outcome");
  add_common(*explain);
  explain->add_option("--config", config_path, "Config file (default: the usual search)")->type_name("FILE");
  explain->add_flag("--json", ex.json, "Print one JSON object: verdict, delay_ms, reason, rule, what");
  explain->add_option("METHOD", ex.method, "HTTP method, e.g. POST")->required();
  explain->add_option("URL", ex.url, "Request URL")->required();
  explain->add_option("--status", ex.status, "HTTP status the attempt got")->type_name("N");
  std::string body;
  explain->add_option("--body", body, "Response body, or @FILE, or @- for stdin")->type_name("TEXT|@FILE");
  explain->add_option("--header", ex.headers, "Response header 'Name: value' (repeatable)")
      ->type_name("'K: V'")
      ->allow_extra_args(false);
  explain->add_option("--transport", ex.transport, "Transport outcome: ok, connect_refused, reset, send, recv, "
                                                   "empty_reply, tls_handshake, http2_stream, timeout, host_abort, "
                                                   "bad_argument, other")
      ->type_name("KIND");
  explain->add_option("--attempt", ex.attempt, "1-based number of the attempt that just ended (default 1)")
      ->type_name("N");
  explain->add_option("--elapsed-ms", ex.elapsed_ms, "Time since the transfer began (default 0)")->type_name("N");
  explain->add_option("--previous-delay-ms", ex.previous_delay_ms, "Delay chosen before this attempt (jitter)")
      ->type_name("N");
  explain->add_flag("--committed", ex.committed, "A body byte already reached the host");
  explain->add_flag("--not-replayable", ex.not_replayable, "The upload cannot be rewound");

  std::string curl = "curl";
  bool tls = false;
  CLI::App* demo = app.add_subcommand("demo", "Run curl against a flaky local server without and with curlretry");
  add_common(*demo);
  demo->add_flag("--tls", tls, "Use HTTPS on loopback (certificate generated on the fly)");
  demo->add_option("--curl", curl, "The curl binary to run (default: curl from PATH)")->type_name("PATH");

  DoctorOptions doctor_options;
  CLI::App* doctor = app.add_subcommand("doctor", "Say whether curlretry can reach a program's libcurl, and why");
  add_common(*doctor);
  doctor->add_flag("--json", doctor_options.json, "Print one JSON object: verdict, program, chain, via, libcurl, "
                                                   "flavour, summary, details, advice");
  doctor->footer("Usage: curlretry doctor [--json] COMMAND|PATH [ARGS...]\n"
                 "Exit status: 0 works, 3 not reachable or LD_PRELOAD ignored, 4 nothing to do, 5 maybe, 1 error.");
  doctor->prefix_command();

  StatsOptions stats_options;
  std::string bucket;
  CLI::App* stats = app.add_subcommand("stats", "Summarise attempt logs written with CURLRETRY_EVENTS=FILE");
  add_common(*stats);
  stats->add_option("FILE", stats_options.files, "Attempt logs (- = stdin)")->required();
  stats->add_option("--bucket", bucket, "Time per row of the chart: 30s, 5m, 1h, 1d (default: fit 24 rows)")
      ->type_name("DURATION");
  stats->add_option("--width", stats_options.width, "Widest bar in characters (default 50)")->type_name("N");

  // Set last: subcommands copy their parent's footer when created.
  app.footer(
      "Examples:\n"
      "  curlretry -- curl -sS https://api.example.com/v1/models\n"
      "  curlretry check --config ./curlretry.yaml\n"
      "  curlretry explain --json POST https://open.bigmodel.cn/api/paas/v4/chat/completions --status 429\n"
      "  curlretry doctor python3 agent.py\n"
      "  CURLRETRY_EVENTS=/tmp/attempts.jsonl curlretry -- ./agent.sh; curlretry stats /tmp/attempts.jsonl\n"
      "Configuration: $CURLRETRY_CONFIG, $XDG_CONFIG_HOME/curlretry/config.yaml,\n"
      "~/.config/curlretry/config.yaml, /etc/curlretry/config.yaml (see config/REFERENCE.md).");
  if (argc <= 1) {
    std::cerr << app.help();
    return 2;
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
    std::cerr << "curlretry: " << e.what() << "\nRun 'curlretry --help' for usage.\n";
    return 2;
  }
  if (separator && (check->parsed() || explain->parsed() || demo->parsed() || stats->parsed())) {
    std::cerr << "curlretry: unexpected `--`: only the launcher takes a command\n";
    return 2;
  }

  const auto config = [&]() -> std::optional<std::string> {
    if (config_path.empty()) return std::nullopt;
    return config_path;
  };
  try {
    if (check->parsed()) return run_check({config()});
    if (explain->parsed()) {
      ex.config = config();
      if (explain->count("--body") > 0) ex.body = body;
      return run_explain(ex);
    }
    if (demo->parsed()) return run_demo_command(curl, tls);
    if (doctor->parsed()) {
      doctor_options.command = doctor->remaining();
      doctor_options.command.insert(doctor_options.command.end(), after.begin(), after.end());
      return run_doctor(doctor_options);
    }
    if (stats->parsed()) {
      if (!bucket.empty()) {
        const auto seconds = parse_bucket(bucket);
        if (!seconds) {
          std::cerr << "curlretry stats: --bucket " << bucket << ": expected a duration such as 30s, 5m, 1h\n";
          return 2;
        }
        stats_options.bucket_seconds = *seconds;
      }
      return run_stats(stats_options);
    }
    launch.config = config();
    launch.command = run->parsed() ? run->remaining() : app.remaining();
    // `curlretry curl -- x`: the `--` was the command's own argument.
    if (separator && !launch.command.empty()) launch.command.emplace_back("--");
    launch.command.insert(launch.command.end(), after.begin(), after.end());
    return run_launch(launch);
  } catch (const std::exception& e) {
    std::cerr << "curlretry: " << e.what() << '\n';
    return 1;
  }
}
