// The subcommands of `curlretry` other than the launcher (check, explain, demo, doctor, stats,
// fleet): each declares its arguments on the parser and says how to run once parsed, so that
// main() is a table.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace curlretry::cli {

// Prints the usage error of `command` and gives the exit status for it.
using UsageFailure = std::function<int(const CLI::App& command, const std::string& problem)>;

// What a subcommand does with the words after the first `--`.
enum class AfterSeparator {
  refused,  // "unexpected `--`"
  command,  // they are the command it examines (doctor)
};

struct Subcommand {
  CLI::App* app = nullptr;
  AfterSeparator after_separator = AfterSeparator::refused;
  // Runs the parsed subcommand; `after` holds the words after the first `--`.
  std::function<int(const std::vector<std::string>& after, const UsageFailure& usage_failure)> run;
};

// --version and --help on every (sub)command; a subcommand is strict (make_strict).
void add_common(CLI::App& app);

// The subcommands, added to `app` in --help order.
std::vector<Subcommand> add_subcommands(CLI::App& app);

}  // namespace curlretry::cli
