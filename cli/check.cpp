#include "cli/check.h"

#include <cstdio>
#include <string_view>
#include <iostream>

#include "cli/describe.h"
#include "config/config.h"

namespace curlretry::cli {
namespace {

// Characters, not bytes, so "风控" does not push its source out of line.
std::size_t width(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

void pad(std::string& line, std::size_t column) {
  const std::size_t w = width(line);
  line.append(w + 2 > column ? 2 : column - w, ' ');
}

void print_values(const KeyValues& values, const config::Sources& sources) {
  for (const auto& [key, value] : values) {
    const auto source = sources.find(key);
    std::string line = "  " + key;
    pad(line, 28);
    line += value;
    pad(line, 64);
    line += source == sources.end() ? "built-in" : source->second;
    std::cout << line << '\n';
  }
}

}  // namespace

int run_check(const CheckOptions& options) {
  const config::LoadResult result = config::load(config::Environment::process(), options.config);
  if (!result.ok()) {
    for (const auto& warning : result.warnings) std::cerr << "curlretry: warning: " << warning << '\n';
    std::cerr << "curlretry: " << result.error << '\n';
    return 1;
  }
  const config::Config& c = *result.config;
  std::cout << "config: " << (c.file.empty() ? "none found, built-in defaults" : c.file) << "\n\n";
  std::cout << "settings:\n";
  print_values(describe_settings(c.settings), c.settings_sources);
  std::cout << "\ndefaults:\n";
  print_values(describe_policy(c.defaults), c.default_sources);
  for (const auto& rule : c.rules) {
    std::cout << "\nrule \"" << rule.name << "\" (" << describe_match(rule.match) << "):\n";
    print_values(describe_policy(rule.policy), rule.sources);
    print_values(describe_agent(rule), rule.sources);
  }
  if (!result.warnings.empty()) {
    std::cout << "\nwarnings:\n";
    for (const auto& warning : result.warnings) std::cout << "  " << warning << '\n';
  }
  std::cout << "\nOK: " << c.rules.size() << (c.rules.size() == 1 ? " rule" : " rules")
            << (c.settings.disabled ? " (curlretry is disabled)" : "") << '\n';
  return std::cout.good() ? 0 : 1;
}

}  // namespace curlretry::cli
