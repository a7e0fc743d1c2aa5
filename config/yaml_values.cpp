#include "config/yaml_values.h"

#include <climits>

#include "config/env.h"
#include "config/limits.h"
#include "config/yaml_loader.h"

namespace curlretry::config {

std::string join_key(std::string_view parent, std::string_view child) {
  if (parent.empty()) return std::string(child);
  if (child.empty()) return std::string(parent);
  return std::string(parent) + "." + std::string(child);
}

std::string Values::where(const YamlNode& node) const {
  const std::string file = node.file.empty() ? file_ : std::string(node.file);
  return file + ":" + std::to_string(node.at.line) + ":" + std::to_string(node.at.column);
}

void Values::fail(const YamlNode& node, std::string_view key, std::string_view problem) const {
  std::string message = where(node) + ": ";
  if (!key.empty()) message += std::string(key) + ": ";
  message += problem;
  throw ConfigError{std::move(message)};
}

void Values::check_keys(const YamlNode& map, std::string_view key, std::span<const std::string_view> known) const {
  for (const auto& [name, value] : map.entries) {
    bool found = false;
    for (const auto k : known) found = found || k == name.text;
    if (found) continue;
    std::string problem = "unknown key";
    if (auto guess = closest_key(name.text, known)) {
      problem += "; did you mean \"" + std::string(*guess) + "\"?";
    } else {
      problem += " (known keys here:";
      for (std::size_t i = 0; i < known.size(); ++i) problem += (i ? ", " : " ") + std::string(known[i]);
      problem += ")";
    }
    fail(name, join_key(key, name.text), problem);
  }
}

void Values::expect_map(const YamlNode& node, std::string_view key, bool null_is_empty) const {
  if (node.kind == YamlNode::Kind::map) return;
  if (node.kind == YamlNode::Kind::null && null_is_empty) return;
  fail(node, key, "expected a map, got " + std::string(describe(node)));
}

long long Values::integer(const YamlNode& node, std::string_view key, long long min, long long max,
                          std::string_view expected) const {
  if (node.kind != YamlNode::Kind::scalar || node.quoted) {
    fail(node, key, "expected an integer (" + std::string(expected) + "), got " + std::string(describe(node)));
  }
  const ParsedInteger parsed = parse_integer(node.text);
  if (parsed.overflow) fail(node, key, "\"" + node.text + "\" is too large (expected " + std::string(expected) + ")");
  if (!parsed.value)
    fail(node, key, "\"" + node.text + "\" is not an integer (expected " + std::string(expected) + ")");
  if (*parsed.value < min || *parsed.value > max) {
    fail(node, key, node.text + " is out of range (expected " + std::string(expected) + ")");
  }
  return *parsed.value;
}

long long Values::millis(const YamlNode& node, std::string_view key) const {
  const long long value = integer(node, key, LLONG_MIN, LLONG_MAX, "milliseconds");
  if (value < 0) fail(node, key, "a delay cannot be negative (" + node.text + ")");
  if (value > kMaxMillis) {
    fail(node, key, node.text + " ms is too large (at most " + std::to_string(kMaxMillis) + " = 30 days)");
  }
  return value;
}

bool Values::boolean(const YamlNode& node, std::string_view key) const {
  if (node.kind == YamlNode::Kind::scalar && !node.quoted) {
    if (auto value = bool_from_string(node.text)) return *value;
  }
  fail(node, key, "expected true or false, got " +
                      (node.kind == YamlNode::Kind::scalar ? "\"" + node.text + "\"" : std::string(describe(node))));
}

std::string Values::string(const YamlNode& node, std::string_view key) const {
  if (node.kind != YamlNode::Kind::scalar) fail(node, key, "expected a string, got " + std::string(describe(node)));
  return node.text;
}

std::vector<std::string> Values::strings(const YamlNode& node, std::string_view key, bool allow_empty_items) const {
  if (node.kind != YamlNode::Kind::sequence) {
    fail(node, key, "expected a list of strings, got " + std::string(describe(node)));
  }
  std::vector<std::string> out;
  out.reserve(node.items.size());
  for (std::size_t i = 0; i < node.items.size(); ++i) {
    const std::string item_key = std::string(key) + "[" + std::to_string(i) + "]";
    std::string value = string(node.items[i], item_key);
    if (value.empty() && !allow_empty_items) fail(node.items[i], item_key, "must not be empty");
    out.push_back(std::move(value));
  }
  return out;
}

}  // namespace curlretry::config
