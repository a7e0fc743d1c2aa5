#include "cli/usage.h"

#include <exception>
#include <map>
#include <string_view>

namespace curlretry::cli {
namespace {

std::map<const CLI::App*, std::string>& usage_lines() {
  static std::map<const CLI::App*, std::string> lines;
  return lines;
}

// CLI11 2.1 puts the option's name first in these messages ("--status: 1 required N missing",
// "Could not convert: --status = abc", "URL is required"); everything after it is its wording.
std::string before(std::string_view text, std::string_view separator) {
  const auto at = text.find(separator);
  return std::string(at == std::string_view::npos ? text : text.substr(0, at));
}

std::string after(std::string_view text, std::string_view separator) {
  const auto at = text.find(separator);
  return at == std::string_view::npos ? std::string() : std::string(text.substr(at + separator.size()));
}

}  // namespace

void set_usage(CLI::App& app, std::string line) { usage_lines()[&app] = std::move(line); }

std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent != nullptr; parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

std::string usage_of(const CLI::App& app) {
  const auto found = usage_lines().find(&app);
  return found != usage_lines().end() ? found->second : command_path(app) + " [OPTIONS]";
}

std::string UsageFormatter::make_usage(const CLI::App* app, std::string /*name*/) const {
  return "Usage: " + usage_of(*app) + "\n";
}

void make_strict(CLI::App& app) {
  app.prefix_command(false);
  app.allow_extras(false);
  app.fallthrough(false);
}

const CLI::App& failed_command(const CLI::App& root) {
  const CLI::App* command = &root;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : command->get_subcommands()) {
      command = sub;
      deeper = true;
      break;
    }
  }
  return *command;
}

std::string describe_extra(const std::string& extra) {
  if (extra.size() > 1 && extra[0] == '-') return "unknown option " + before(extra, "=");
  return "unexpected argument '" + extra + "'";
}

CLI::Validator whole_number(long long min) {
  return CLI::Validator(
      [min](std::string& value) -> std::string {
        std::size_t used = 0;
        long long n = 0;
        try {
          n = std::stoll(value, &used, 10);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != value.size()) return "'" + value + "' is not a whole number";
        if (n < min) return "'" + value + "' is below " + std::to_string(min);
        return {};
      },
      "N");
}

std::string describe_parse_error(const CLI::ParseError& error, const CLI::App& command) {
  const std::string_view what = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    const std::vector<std::string> extras = command.remaining();
    if (!extras.empty()) return describe_extra(extras.front());
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) return "missing " + before(what, " is required");
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    return before(what, ":") + " needs a value";
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    const std::string rest = after(what, "Could not convert: ");
    if (!rest.empty()) return before(rest, " = ") + ": '" + after(rest, " = ") + "' is not a valid value";
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr) {
    return before(what, " excludes ") + " and " + after(what, " excludes ") + " cannot be used together";
  }
  // ValidationError carries our validators' own words after the name.
  return std::string(what);
}

std::string usage_error(const CLI::App& command, const std::string& problem) {
  const std::string path = command_path(command);
  return path + ": " + problem + "\nUsage: " + usage_of(command) + "\nRun '" + path + " --help' for more.\n";
}

}  // namespace curlretry::cli
