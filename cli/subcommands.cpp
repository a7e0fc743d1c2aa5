#include "cli/subcommands.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <tuple>

#include "cli/check.h"
#include "cli/demo.h"
#include "cli/doctor.h"
#include "cli/explain.h"
#include "cli/fleet.h"
#include "cli/library_path.h"
#include "cli/stats.h"
#include "cli/usage.h"

#ifndef CURLRETRY_VERSION
#define CURLRETRY_VERSION "unknown"
#endif

namespace curlretry::cli {
namespace {

constexpr const char* kVersion = "curlretry " CURLRETRY_VERSION;

Subcommand add_check(CLI::App& app) {
  struct State {
    std::vector<std::string> files;
    std::vector<std::string> positional;  // CLI11 assigns per option: one vector each
    bool json = false;
  };
  auto s = std::make_shared<State>();
  CLI::App* check = app.add_subcommand("check", "Validate the config and print the effective policy with sources");
  add_common(*check);
  set_usage(*check, "curlretry check [--json] [--config FILE]... [FILE...]");
  check->add_flag("--json", s->json, "Print one JSON object: ok, files, settings, defaults, rules, warnings");
  check->add_option("--config", s->files, "Config file (default: the usual search)")
      ->type_name("FILE")->allow_extra_args(false);
  check->add_option("FILE", s->positional, "Config file, as --config FILE (after the --config ones)")
      ->type_name("FILE");
  return {check, AfterSeparator::refused, [s, check](const std::vector<std::string>&, const UsageFailure& failure) {
            std::optional<std::string> files;
            s->files.insert(s->files.end(), s->positional.begin(), s->positional.end());
            for (const auto& file : s->files) {
              if (file.find(':') != std::string::npos) {
                return failure(*check, file + ": a file name with ':' cannot be listed; name it in `include:`");
              }
              files = files ? *files + ":" + file : file;
            }
            return run_check({files, s->json});
          }};
}

Subcommand add_explain(CLI::App& app) {
  struct State {
    ExplainOptions ex;
    std::string config;
    std::string body;
  };
  auto s = std::make_shared<State>();
  ExplainOptions& ex = s->ex;
  CLI::App* explain = app.add_subcommand("explain", "Show what curlretry decides for one attempt's outcome");
  add_common(*explain);
  set_usage(*explain, "curlretry explain [--json] [--config FILE] [--status N] [--header 'K: V']... "
                      "[--body TEXT|@FILE] [--transport KIND] [--attempt N] [OPTIONS] METHOD URL");
  explain->add_option("--config", s->config, "Config file (default: the usual search)")->type_name("FILE");
  explain->add_flag("--json", ex.json, "Print one JSON object: verdict, delay_ms, reason, rule, what");
  explain->add_option("METHOD", ex.method, "HTTP method, e.g. POST")->required();
  explain->add_option("URL", ex.url, "Request URL")->required();
  explain->add_option("--status", ex.status, "HTTP status the attempt got")->type_name("N")
      ->check(whole_number(0));
  explain->add_option("--body", s->body, "Response body, or @FILE, or @- for stdin")->type_name("TEXT|@FILE");
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
  return {explain, AfterSeparator::refused, [s, explain](const std::vector<std::string>&, const UsageFailure&) {
            if (explain->count("--config") > 0) s->ex.config = s->config;
            if (explain->count("--body") > 0) s->ex.body = s->body;
            return run_explain(s->ex);
          }};
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

Subcommand add_demo(CLI::App& app) {
  struct State {
    std::string curl = "curl";
    bool tls = false;
  };
  auto s = std::make_shared<State>();
  CLI::App* demo = app.add_subcommand("demo", "Run curl against a flaky local server without and with curlretry");
  add_common(*demo);
  set_usage(*demo, "curlretry demo [--tls] [--curl PATH]");
  demo->add_flag("--tls", s->tls, "Use HTTPS on loopback (certificate generated on the fly)");
  demo->add_option("--curl", s->curl, "The curl binary to run (default: curl from PATH)")->type_name("PATH");
  return {demo, AfterSeparator::refused,
          [s](const std::vector<std::string>&, const UsageFailure&) { return run_demo_command(s->curl, s->tls); }};
}

Subcommand add_doctor(CLI::App& app) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* doctor = app.add_subcommand("doctor", "Say whether curlretry can reach a program's libcurl, and why");
  add_common(*doctor);
  set_usage(*doctor, "curlretry doctor [--json] [--] COMMAND|PATH [ARGS...]");
  doctor->add_flag("--json", options->json, "Print one JSON object: verdict, program, chain, via, libcurl, "
                                            "flavour, summary, details, advice");
  doctor->footer("Exit status: 0 works, 3 not reachable or LD_PRELOAD ignored, 4 nothing to do, 5 maybe, 1 error.");
  doctor->prefix_command();
  return {doctor, AfterSeparator::command,
          [options, doctor](const std::vector<std::string>& after, const UsageFailure& failure) {
            options->command = doctor->remaining();
            options->command.insert(options->command.end(), after.begin(), after.end());
            if (options->command.empty()) return failure(*doctor, "missing COMMAND|PATH");
            return run_doctor(*options);
          }};
}

int run_stats_command(StatsOptions& options, const std::string& bucket, const std::string& since,
                      const std::string& until, const CLI::App& stats, const UsageFailure& failure) {
  if (!bucket.empty()) {
    const auto seconds = parse_bucket(bucket);
    if (!seconds) return failure(stats, "--bucket " + bucket + ": expected a duration such as 30s, 5m, 1h");
    options.bucket_seconds = *seconds;
  }
  const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
  for (auto [flag, text, bound] : {std::tuple{"--since", &since, &options.since_ms},
                                   std::tuple{"--until", &until, &options.until_ms}}) {
    if (text->empty()) continue;
    *bound = parse_time_bound(*text, now_ms);
    if (!*bound) {
      return failure(stats, std::string(flag) + " " + *text +
                                ": expected a UTC time such as 2025-06-01T12:00:00Z, a date, or 2h");
    }
  }
  return run_stats(options);
}

Subcommand add_stats(CLI::App& app) {
  struct State {
    StatsOptions options;
    std::string bucket, since, until;
  };
  auto s = std::make_shared<State>();
  CLI::App* stats = app.add_subcommand("stats", "Summarise attempt logs written with CURLRETRY_EVENTS=FILE");
  add_common(*stats);
  set_usage(*stats, "curlretry stats [--json] [--since TIME] [--until TIME] [--processes] [--bucket DURATION] "
                    "[--width N] FILE...");
  stats->add_flag("--json", s->options.json, "Print one JSON object: totals per host and process, reasons");
  stats->add_option("--since", s->since, "Only attempts from TIME: 2025-06-01T12:00:00Z, 2025-06-01, or 2h (ago)")
      ->type_name("TIME");
  stats->add_option("--until", s->until, "Only attempts before TIME (same forms)")->type_name("TIME");
  stats->add_flag("--processes", s->options.processes, "Also a table per process (pid, program)");
  stats->add_option("FILE", s->options.files, "Attempt logs (- = stdin)")->required()->type_name("FILE");
  stats->add_option("--bucket", s->bucket, "Time per row of the chart: 30s, 5m, 1h, 1d (default: fit 24 rows)")
      ->type_name("DURATION");
  stats->add_option("--width", s->options.width, "Widest bar in characters (default 50)")->type_name("N")
      ->check(whole_number(1));
  return {stats, AfterSeparator::refused, [s, stats](const std::vector<std::string>&, const UsageFailure& failure) {
            return run_stats_command(s->options, s->bucket, s->since, s->until, *stats, failure);
          }};
}

Subcommand add_fleet(CLI::App& app) {
  auto options = std::make_shared<FleetOptions>();
  CLI::App* fleet = add_fleet_command(app, *options);
  add_common(*fleet);
  set_usage(*fleet, "curlretry fleet [--json] [--watch [--interval S] [--count N]] [--clear KEY] [--config FILE]");
  return {fleet, AfterSeparator::refused,
          [options](const std::vector<std::string>&, const UsageFailure&) { return run_fleet(*options); }};
}

}  // namespace

// Every subcommand but the launcher's `run` and `doctor` (which take a command) is strict: an
// unknown option or an extra argument is an error, never ignored.
void add_common(CLI::App& app) {
  app.set_version_flag("--version", kVersion, "Print the version and exit");
  app.set_help_flag("-h,--help", "Print this help and exit");
  if (app.get_parent() != nullptr) make_strict(app);
}

std::vector<Subcommand> add_subcommands(CLI::App& app) {
  return {add_check(app), add_explain(app), add_demo(app), add_doctor(app), add_stats(app), add_fleet(app)};
}

}  // namespace curlretry::cli
