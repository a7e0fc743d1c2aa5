#include "cli/check.h"

#include <cstdio>
#include <string_view>
#include <iostream>

#include "cli/describe.h"
#include "cli/json.h"
#include "config/config.h"
#include "core/count_text.h"

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

std::string json_values(const KeyValues& values, const config::Sources& sources) {
  std::string out = "{";
  for (const auto& [key, value] : values) {
    const auto source = sources.find(key);
    if (out.size() > 1) out += ",";
    out += json_quote(key) + ":{\"value\":" + json_quote(value) +
           ",\"source\":" + json_quote(source == sources.end() ? "built-in" : source->second) + "}";
  }
  return out + "}";
}

std::string json_strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& item : items) out += (out.size() > 1 ? "," : "") + json_quote(item);
  return out + "]";
}

}  // namespace

std::string check_json(const config::LoadResult& result) {
  if (!result.ok()) {
    return "{\"ok\":false,\"error\":" + json_quote(result.error) + ",\"warnings\":" +
           json_strings(result.warnings) + "}\n";
  }
  const config::Config& c = *result.config;
  std::string out = "{\"ok\":true,\"files\":" + json_strings(c.files);
  out += ",\"settings\":" + json_values(describe_settings(c.settings), c.settings_sources);
  out += ",\"defaults\":" + json_values(describe_policy(c.defaults), c.default_sources);
  out += ",\"rules\":[";
  for (std::size_t i = 0; i < c.rules.size(); ++i) {
    const config::Rule& rule = c.rules[i];
    out += std::string(i ? "," : "") + "{\"name\":" + json_quote(rule.name) + ",\"match\":{\"host\":" +
           json_quote(rule.match.host) + ",\"path\":" + json_quote(rule.match.path) + ",\"method\":" +
           json_quote(rule.match.method) + "},\"from\":" + json_quote(rule.where) +
           ",\"values\":" + json_values(describe_policy(rule.policy), rule.sources) + "}";
  }
  out += "],\"warnings\":" + json_strings(result.warnings) + "}\n";
  return out;
}

int run_check(const CheckOptions& options) {
  const config::LoadResult result = config::load(config::Environment::process(), options.config);
  if (options.json) {
    std::cout << check_json(result);
    return result.ok() && std::cout.good() ? 0 : 1;
  }
  if (!result.ok()) {
    for (const auto& warning : result.warnings) std::cerr << "curlretry: warning: " << warning << '\n';
    std::cerr << "curlretry: " << result.error << '\n';
    return 1;
  }
  const config::Config& c = *result.config;
  if (c.files.empty()) {
    std::cout << "config: none found, built-in defaults\n\n";
  } else if (c.files.size() == 1) {
    std::cout << "config: " << c.files.front() << "\n\n";
  } else {
    std::cout << "config: " << c.files.size() << " files, applied in this order (a later value wins):\n";
    for (const auto& file : c.files) std::cout << "  " << file << '\n';
    std::cout << '\n';
  }
  std::cout << "settings:\n";
  print_values(describe_settings(c.settings), c.settings_sources);
  std::cout << "\ndefaults:\n";
  print_values(describe_policy(c.defaults), c.default_sources);
  for (const auto& rule : c.rules) {
    std::cout << "\nrule \"" << rule.name << "\" (" << describe_match(rule.match) << ")"
              << (rule.where.empty() ? "" : " from " + rule.where) << ":\n";
    print_values(describe_policy(rule.policy), rule.sources);
    print_values(describe_agent(rule), rule.sources);
  }
  if (!result.warnings.empty()) {
    std::cout << "\nwarnings:\n";
    for (const auto& warning : result.warnings) std::cout << "  " << warning << '\n';
  }
  std::cout << "\nOK: " << core::counted(static_cast<long long>(c.rules.size()), "rule", "rules")
            << (c.settings.disabled ? " (curlretry is disabled)" : "") << '\n';
  return std::cout.good() ? 0 : 1;
}

}  // namespace curlretry::cli
