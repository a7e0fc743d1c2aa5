// What `curlretry` says about its own command line: one Usage line per (sub)command, and parse
// errors in curlretry's words (CLI11 parses; its messages name its own internals, ours name the
// argument and the way out).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace curlretry::cli {

// Gives `app` its Usage line ("curlretry check [--json] [FILE...]") for --help and for errors.
void set_usage(CLI::App& app, std::string line);
// The line set_usage gave `app`, else "curlretry NAME [OPTIONS]".
std::string usage_of(const CLI::App& app);

// Formats --help with the line set_usage gave, instead of CLI11's generated one.
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override;
};

// Makes a subcommand strict: unknown options and extra positionals are errors, never passed on
// (a subcommand otherwise inherits the launcher's prefix_command and takes anything).
void make_strict(CLI::App& app);

// The problem, in a few words: "unknown option --bogus", "unexpected argument 'bad.yaml'",
// "--status: 'abc' is not a whole number". `command` is the one that failed (failed_command).
std::string describe_parse_error(const CLI::ParseError& error, const CLI::App& command);

// "unknown option --bogus" or "unexpected argument 'x'" for the first of `extras`.
std::string describe_extra(const std::string& extra);

// Validator for integer options: "'abc' is not a whole number", "'-3' is below 0".
CLI::Validator whole_number(long long min);

// The deepest subcommand the parse had entered when it failed (or `root`).
const CLI::App& failed_command(const CLI::App& root);

// The whole message for a parse error of `command`: "curlretry check: unknown option --bogus",
// its Usage line and where to read more.
std::string usage_error(const CLI::App& command, const std::string& problem);

// "curlretry" or "curlretry check".
std::string command_path(const CLI::App& app);

}  // namespace curlretry::cli
