#include "config/yaml_agent.h"

#include <climits>

#include "core/ascii.h"

#include "config/glob.h"
#include "config/keys.h"
#include "config/limits.h"

namespace curlretry::config {
namespace {

constexpr long long kMaxFallbackAfter = 1000;
constexpr long long kMaxAuthTimeoutMs = 10LL * 60 * 1000;

// RFC 9110 token characters: what a header name may contain.
bool is_token(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

using core::ascii::lower;

bool is_number(const YamlNode& node) {
  if (node.kind != YamlNode::Kind::scalar || node.quoted || node.text.empty()) return false;
  for (const char c : node.text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::vector<int> statuses(const Values& v, const YamlNode& node, const std::string& key) {
  if (node.kind != YamlNode::Kind::sequence || node.items.empty()) {
    v.fail(node, key, "expected a non-empty list of HTTP status codes, got " + std::string(describe(node)));
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < node.items.size(); ++i) {
    out.push_back(static_cast<int>(
        v.integer(node.items[i], key + "[" + std::to_string(i) + "]", 100, 599, "an HTTP status, 100..599")));
  }
  return out;
}

}  // namespace

std::vector<HeaderMatch> read_header_match(const Values& v, const YamlNode& node, const std::string& key) {
  v.expect_map(node, key);
  if (node.entries.empty()) v.fail(node, key, "expected at least one `NAME: GLOB` entry");
  std::vector<HeaderMatch> out;
  for (const auto& [name, value] : node.entries) {
    const std::string k = join_key(key, name.text);
    if (!is_token(name.text)) v.fail(name, k, "\"" + name.text + "\" is not a header name");
    HeaderMatch m;
    m.name = lower(name.text);
    for (const HeaderMatch& seen : out) {
      if (seen.name == m.name) v.fail(name, k, "header \"" + name.text + "\" is listed twice (names ignore case)");
    }
    m.glob = v.string(value, k);
    if (auto bad = glob_error(m.glob)) v.fail(value, k, "bad glob \"" + m.glob + "\": " + *bad);
    out.push_back(std::move(m));
  }
  return out;
}

Fallback read_fallback(const Values& v, const YamlNode& node, const std::string& key) {
  v.expect_map(node, key);
  v.check_keys(node, key, part_keys("fallback"));
  Fallback f;
  f.after = 3;
  f.on_status = {529};
  f.on_markers = {"overloaded_error"};
  if (const YamlNode* after = member(node, "after")) {
    f.after = static_cast<int>(v.integer(*after, join_key(key, "after"), 1, kMaxFallbackAfter, "a number, 1..1000"));
  }
  if (const YamlNode* on = member(node, "on")) {
    const std::string k = join_key(key, "on");
    if (on->kind != YamlNode::Kind::sequence || on->items.empty()) {
      v.fail(*on, k, "expected a non-empty list of statuses and body markers, such as [529, overloaded_error]");
    }
    f.on_status.clear();
    f.on_markers.clear();
    for (std::size_t i = 0; i < on->items.size(); ++i) {
      const YamlNode& item = on->items[i];
      const std::string ik = k + "[" + std::to_string(i) + "]";
      if (is_number(item)) {
        f.on_status.push_back(static_cast<int>(v.integer(item, ik, 100, 599, "an HTTP status, 100..599")));
      } else {
        std::string marker = v.string(item, ik);
        if (marker.empty()) v.fail(item, ik, "an empty body marker matches every body");
        f.on_markers.push_back(std::move(marker));
      }
    }
  }
  if (const YamlNode* model = member(node, "model")) {
    f.model = v.string(*model, join_key(key, "model"));
    if (f.model.empty()) v.fail(*model, join_key(key, "model"), "must not be empty");
    for (const char c : f.model) {
      if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') {
        v.fail(*model, join_key(key, "model"), "a model name has no quotes, backslashes or control characters");
      }
    }
  }
  if (const YamlNode* url = member(node, "url")) {
    const std::string k = join_key(key, "url");
    f.url = v.string(*url, k);
    const bool scheme = f.url.rfind("http://", 0) == 0 || f.url.rfind("https://", 0) == 0;
    if (!scheme || f.url.find_first_of("?# ") != std::string::npos) {
      v.fail(*url, k, "\"" + f.url + "\" is not a base URL (http:// or https://, no query)");
    }
    while (!f.url.empty() && f.url.back() == '/') f.url.pop_back();
  }
  if (f.model.empty() && f.url.empty()) v.fail(node, key, "needs `model:` and/or `url:` to fall back to");
  return f;
}

AuthRefresh read_auth(const Values& v, const YamlNode& node, const std::string& key) {
  v.expect_map(node, key);
  v.check_keys(node, key, part_keys("auth"));
  AuthRefresh a;
  a.on = {401};
  if (const YamlNode* on = member(node, "on")) a.on = statuses(v, *on, join_key(key, "on"));
  const YamlNode* command = member(node, "command");
  if (command == nullptr) v.fail(node, join_key(key, "command"), "missing; give the argv list that prints the value");
  const std::string ck = join_key(key, "command");
  if (command->kind != YamlNode::Kind::sequence || command->items.empty()) {
    v.fail(*command, ck, "expected a non-empty argv list such as [/usr/local/bin/get-token, --refresh] (no shell)");
  }
  a.command = v.strings(*command, ck, false);
  if (a.command.front().empty()) v.fail(*command, ck, "the program name must not be empty");
  if (const YamlNode* header = member(node, "header")) {
    a.header = v.string(*header, join_key(key, "header"));
    if (!is_token(a.header)) v.fail(*header, join_key(key, "header"), "\"" + a.header + "\" is not a header name");
  }
  if (const YamlNode* timeout = member(node, "timeout_ms")) {
    a.timeout_ms = v.integer(*timeout, join_key(key, "timeout_ms"), 1, kMaxAuthTimeoutMs, "milliseconds, 1..600000");
  }
  return a;
}

bool read_agent_setting(const Values& v, std::string_view name, const YamlNode& value, const std::string& key,
                        Settings& settings) {
  if (name == "persistent") {
    settings.persistent = v.boolean(value, key);
    return true;
  }
  if (name == "heartbeat_ms") {
    settings.heartbeat_ms = v.integer(value, key, 0, kMaxMillis, "milliseconds, 0 (never) or more");
    return true;
  }
  return false;
}

}  // namespace curlretry::config
