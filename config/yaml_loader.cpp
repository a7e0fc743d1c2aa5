#include "config/yaml_loader.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <new>
#include <set>

#include "config/env.h"
#include "config/glob.h"
#include "config/keys.h"
#include "config/limits.h"
#include "config/load_error.h"
#include "config/yaml_agent.h"
#include "config/yaml_stream.h"
#include "config/yaml_fleet.h"
#include "config/yaml_proxy.h"
#include "config/yaml_tree.h"
#include "config/yaml_values.h"
#include "core/ascii.h"

namespace curlretry::config {
namespace {

std::vector<std::string_view> policy_keys(std::string_view section) { return file_keys(KeyScope::policy, section); }

constexpr core::Transport kAllTransports[] = {
    core::Transport::ok,           core::Transport::connect_refused, core::Transport::reset,
    core::Transport::send,         core::Transport::recv,            core::Transport::empty_reply,
    core::Transport::tls_handshake, core::Transport::http2_stream,   core::Transport::timeout,
    core::Transport::host_abort,   core::Transport::bad_argument,    core::Transport::other,
};

bool never_retried(core::Transport t) {
  return t == core::Transport::ok || t == core::Transport::host_abort || t == core::Transport::bad_argument;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::string suggestion(std::string_view word, const std::vector<std::string>& names) {
  std::vector<std::string_view> views(names.begin(), names.end());
  if (auto guess = closest_key(word, views)) return "; did you mean \"" + std::string(*guess) + "\"?";
  return "";
}

using core::ascii::lower;
using core::ascii::upper;

class Loader {
 public:
  explicit Loader(std::string_view name) : v_(name) {}

  Config load(const YamlNode& root) {
    if (root.kind == YamlNode::Kind::null) {
      v_.fail(root, "", "the file is empty; a config needs at least `version: 1`");
    }
    if (root.kind != YamlNode::Kind::map) {
      v_.fail(root, "", "expected a map at the top level (starting with `version: 1`), got " +
                            std::string(describe(root)));
    }
    read_version(root);
    v_.check_keys(root, "", part_keys(""));

    Config config = builtin_config();
    config.file = v_.file();
    config.files = {v_.file()};
    // include_merge.cpp resolves and removes `include:`; text loaded without a file has no place
    // to resolve it from.
    if (const YamlNode* include = member(root, "include")) {
      v_.fail(*include, "include", "only a config file can include others (load it from a file)");
    }

    if (const YamlNode* defaults = member(root, "defaults")) {
      v_.expect_map(*defaults, "defaults", true);
      v_.check_keys(*defaults, "defaults", policy_keys(""));
      read_policy(*defaults, "defaults", config.defaults, config.default_sources);
    }
    if (const YamlNode* settings = member(root, "settings")) {
      read_settings(*settings, config.settings, config.settings_sources);
    }
    if (const YamlNode* rules = member(root, "rules")) read_rules(*rules, config);
    if (const YamlNode* fleet = member(root, "fleet")) {
      read_fleet_section(v_, *fleet, config.settings.fleet, config.settings_sources);
    }
    if (const YamlNode* proxy = member(root, "proxy")) read_proxy(v_, *proxy, config.proxy, config.settings_sources);
    return config;
  }

  std::vector<std::string> warnings;

 private:
  Values v_;

  void read_version(const YamlNode& root) {
    const YamlNode* version = member(root, "version");
    if (!version) v_.fail(root, "version", "missing; put `version: 1` at the top of the file");
    const long long n = v_.integer(*version, "version", LLONG_MIN, LLONG_MAX, "1");
    if (n != 1)
      v_.fail(*version, "version", "unsupported version " + version->text + " (this curlretry reads version 1)");
  }

  // Overlays the policy keys present in `map` onto `policy`. Maps merge key by key; lists replace.
  void read_policy(const YamlNode& map, const std::string& key, core::Policy& policy, Sources& sources) {
    for (const auto& [name, value] : map.entries) {
      const std::string k = join_key(key, name.text);
      const std::string& n = name.text;
      if (n == "max_attempts") {
        const long long a = v_.integer(value, k, -1, kMaxAttempts, "-1 for unlimited, or a number >= 1");
        if (a == 0)
          v_.fail(value, k, "0 is out of range (expected -1 for unlimited, or a number >= 1; 1 = never retry)");
        policy.max_attempts = static_cast<int>(a);
        sources["max_attempts"] = v_.where(value);
      } else if (n == "max_elapsed_ms") {
        policy.max_elapsed = core::Millis{v_.millis(value, k)};
        sources["max_elapsed_ms"] = v_.where(value);
      } else if (n == "backoff") {
        read_backoff(value, k, policy.backoff, sources);
      } else if (n == "retry_after") {
        v_.expect_map(value, k);
        v_.check_keys(value, k, policy_keys("retry_after"));
        if (const YamlNode* honor = member(value, "honor")) {
          policy.honor_retry_after = v_.boolean(*honor, join_key(k, "honor"));
          sources["retry_after.honor"] = v_.where(*honor);
        }
        if (const YamlNode* max = member(value, "max_ms")) {
          policy.max_retry_after = core::Millis{v_.millis(*max, join_key(k, "max_ms"))};
          sources["retry_after.max_ms"] = v_.where(*max);
        }
      } else if (n == "retry_on") {
        read_retry_on(value, k, policy, sources);
      } else if (n == "never_retry") {
        v_.expect_map(value, k);
        v_.check_keys(value, k, policy_keys("never_retry"));
        if (const YamlNode* markers = member(value, "body_markers")) {
          policy.permanent_markers = v_.strings(*markers, join_key(k, "body_markers"), false);
          sources["never_retry.body_markers"] = v_.where(*markers);
        }
      } else if (n == "codes") {
        policy.codes = read_codes(value, k);
        sources["codes"] = v_.where(value);
      } else if (n == "body_window") {
        policy.body_window = static_cast<std::size_t>(v_.integer(value, k, 0, kMaxBodyWindow, "bytes, 0..1048576"));
        sources["body_window"] = v_.where(value);
      } else if (n == "stream") {
        read_stream(v_, value, k, policy.stream, sources);
      }
    }
  }

  void read_backoff(const YamlNode& map, const std::string& k, core::Backoff& backoff, Sources& sources) {
    v_.expect_map(map, k);
    v_.check_keys(map, k, policy_keys("backoff"));
    if (const YamlNode* node = member(map, "strategy")) {
      const std::string key = join_key(k, "strategy");
      const std::string name = v_.string(*node, key);
      auto strategy = core::strategy_from_string(name);
      if (!strategy) {
        const std::vector<std::string> names = {"exponential", "triangular", "constant"};
        v_.fail(*node, key, "unknown strategy \"" + name + "\" (expected " + quoted_list(names) + ")" +
                                suggestion(name, names));
      }
      backoff.strategy = *strategy;
      sources["backoff.strategy"] = v_.where(*node);
    }
    if (const YamlNode* node = member(map, "base_ms")) {
      backoff.base = core::Millis{v_.millis(*node, join_key(k, "base_ms"))};
      sources["backoff.base_ms"] = v_.where(*node);
    }
    if (const YamlNode* node = member(map, "max_ms")) {
      backoff.max = core::Millis{v_.millis(*node, join_key(k, "max_ms"))};
      sources["backoff.max_ms"] = v_.where(*node);
    }
    if (const YamlNode* node = member(map, "jitter")) {
      const std::string key = join_key(k, "jitter");
      // `jitter: none` must not be read as a null: only a real null is refused.
      const std::string name = v_.string(*node, key);
      auto jitter = core::jitter_from_string(name);
      if (!jitter) {
        const std::vector<std::string> names = {"none", "full", "equal", "decorrelated"};
        v_.fail(*node, key, "unknown jitter \"" + name + "\" (expected " + quoted_list(names) + ")" +
                                suggestion(name, names));
      }
      backoff.jitter = *jitter;
      sources["backoff.jitter"] = v_.where(*node);
    }
  }

  void read_retry_on(const YamlNode& map, const std::string& k, core::Policy& policy, Sources& sources) {
    v_.expect_map(map, k);
    v_.check_keys(map, k, policy_keys("retry_on"));
    if (const YamlNode* node = member(map, "status")) {
      const std::string key = join_key(k, "status");
      if (node->kind != YamlNode::Kind::sequence) {
        v_.fail(*node, key, "expected a list of HTTP status codes, got " + std::string(describe(*node)));
      }
      std::vector<int> statuses;
      for (std::size_t i = 0; i < node->items.size(); ++i) {
        const long long s = v_.integer(node->items[i], key + "[" + std::to_string(i) + "]", 100, 599,
                                       "an HTTP status, 100..599");
        statuses.push_back(static_cast<int>(s));
      }
      policy.retry_status = std::move(statuses);
      sources["retry_on.status"] = v_.where(*node);
    }
    if (const YamlNode* node = member(map, "body_markers")) {
      policy.retry_markers = v_.strings(*node, join_key(k, "body_markers"), false);
      sources["retry_on.body_markers"] = v_.where(*node);
    }
    if (const YamlNode* node = member(map, "transport")) {
      const std::string key = join_key(k, "transport");
      if (node->kind != YamlNode::Kind::sequence) {
        v_.fail(*node, key, "expected a list of transport errors, got " + std::string(describe(*node)));
      }
      std::vector<std::string> valid;
      for (const auto t : kAllTransports) {
        if (!never_retried(t)) valid.emplace_back(core::to_string(t));
      }
      std::vector<core::Transport> kinds;
      for (std::size_t i = 0; i < node->items.size(); ++i) {
        const YamlNode& item = node->items[i];
        const std::string item_key = key + "[" + std::to_string(i) + "]";
        const std::string name = v_.string(item, item_key);
        auto kind = core::transport_from_string(name);
        if (kind && never_retried(*kind)) {
          v_.fail(item, item_key, "\"" + name + "\" is never retried (expected " + quoted_list(valid) + ")");
        }
        if (!kind) {
          v_.fail(item, item_key, "unknown transport error \"" + name + "\" (expected " + quoted_list(valid) + ")" +
                                      suggestion(name, valid));
        }
        kinds.push_back(*kind);
      }
      policy.retry_transport = std::move(kinds);
      sources["retry_on.transport"] = v_.where(*node);
    }
    if (const YamlNode* node = member(map, "unanswered_post")) {
      policy.retry_unanswered_post = v_.boolean(*node, join_key(k, "unanswered_post"));
      sources["retry_on.unanswered_post"] = v_.where(*node);
    }
  }

  core::CodeTable read_code_table(const YamlNode& map, const std::string& k) {
    v_.expect_map(map, k);
    v_.check_keys(map, k, part_keys("codes"));
    core::CodeTable table;
    const YamlNode* path = member(map, "path");
    if (!path) v_.fail(map, join_key(k, "path"), "missing; say where the code is, e.g. `path: error.code`");
    table.path = v_.string(*path, join_key(k, "path"));
    std::string_view rest = table.path;
    for (;;) {
      const auto dot = rest.find('.');
      if (rest.substr(0, dot).empty()) {
        v_.fail(*path, join_key(k, "path"), "\"" + table.path + "\" is not a dotted path such as error.code");
      }
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    if (const YamlNode* node = member(map, "retry")) table.retry = v_.strings(*node, join_key(k, "retry"), false);
    if (const YamlNode* node = member(map, "permanent")) {
      table.permanent = v_.strings(*node, join_key(k, "permanent"), false);
    }
    if (table.retry.empty() && table.permanent.empty()) {
      v_.fail(map, k, "needs at least one value under retry or permanent");
    }
    for (const auto& code : table.retry) {
      if (std::find(table.permanent.begin(), table.permanent.end(), code) != table.permanent.end()) {
        v_.fail(map, k, "code \"" + code + "\" is listed under both retry and permanent");
      }
    }
    return table;
  }

  // A list of tables, or a single table (the common case of one provider's code field).
  std::vector<core::CodeTable> read_codes(const YamlNode& node, const std::string& k) {
    if (node.kind == YamlNode::Kind::map) return {read_code_table(node, k)};
    if (node.kind != YamlNode::Kind::sequence) {
      v_.fail(node, k, "expected a map {path, retry, permanent} or a list of them, got " + std::string(describe(node)));
    }
    std::vector<core::CodeTable> tables;
    for (std::size_t i = 0; i < node.items.size(); ++i) {
      tables.push_back(read_code_table(node.items[i], k + "[" + std::to_string(i) + "]"));
    }
    return tables;
  }

  void read_settings(const YamlNode& map, Settings& settings, Sources& sources) {
    v_.expect_map(map, "settings", true);
    v_.check_keys(map, "settings", file_keys(KeyScope::settings, ""));
    for (const auto& [name, value] : map.entries) {
      const std::string k = join_key("settings", name.text);
      const std::string& n = name.text;
      if (n == "disable") {
        settings.disabled = v_.boolean(value, k);
      } else if (n == "log") {
        // `log: off` is a plain scalar "off"; keep it a level, not a boolean.
        const std::string text = v_.string(value, k);
        auto level = log_level_from_string(text);
        if (!level) {
          const std::vector<std::string> names = {"off", "error", "warn", "info", "debug"};
          v_.fail(value, k, "unknown log level \"" + text + "\" (expected " + quoted_list(names) + ")" +
                                suggestion(text, names));
        }
        settings.log_level = *level;
      } else if (n == "log_file") {
        settings.log_file = value.kind == YamlNode::Kind::null ? std::string() : v_.string(value, k);
      } else if (n == "events_file") {
        settings.events_file = value.kind == YamlNode::Kind::null ? std::string() : v_.string(value, k);
      } else if (n == "max_upload_replay") {
        settings.max_upload_replay =
            static_cast<std::size_t>(v_.integer(value, k, 0, kMaxBufferBytes, "bytes, 0..1073741824"));
      } else if (read_agent_setting(v_, n, value, k, settings)) {
      } else if (n == "max_error_body") {
        settings.max_error_body =
            static_cast<std::size_t>(v_.integer(value, k, 0, kMaxBufferBytes, "bytes, 0..1073741824"));
      }
      sources[n] = v_.where(value);
    }
  }

  void read_match(const YamlNode& map, const std::string& k, Match& match) {
    v_.expect_map(map, k);
    v_.check_keys(map, k, part_keys("match"));
    if (const YamlNode* node = member(map, "host")) {
      const std::string key = join_key(k, "host");
      match.host = lower(v_.string(*node, key));
      if (match.host.find('/') != std::string::npos) {
        v_.fail(*node, key, "\"" + node->text + "\" is not a host name (no scheme or path; use `path:` for paths)");
      }
      if (auto bad = glob_error(match.host)) v_.fail(*node, key, "bad glob \"" + node->text + "\": " + *bad);
    }
    if (const YamlNode* node = member(map, "path")) {
      const std::string key = join_key(k, "path");
      match.path = v_.string(*node, key);
      if (auto bad = glob_error(match.path)) v_.fail(*node, key, "bad glob \"" + node->text + "\": " + *bad);
      const char first = match.path.empty() ? '/' : match.path.front();
      if (first != '/' && first != '*' && first != '?' && first != '[') {
        v_.fail(*node, key, "\"" + match.path + "\" never matches: paths start with '/'");
      }
    }
    if (const YamlNode* node = member(map, "header")) match.headers = read_header_match(v_, *node, join_key(k, "header"));
    if (const YamlNode* node = member(map, "method")) {
      const std::string key = join_key(k, "method");
      match.method = upper(v_.string(*node, key));
      const bool token = !match.method.empty() && std::all_of(match.method.begin(), match.method.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      });
      if (!token) v_.fail(*node, key, "\"" + node->text + "\" is not an HTTP method (such as GET or POST)");
    }
  }

  void read_rules(const YamlNode& node, Config& config) {
    if (node.kind == YamlNode::Kind::null) return;
    if (node.kind != YamlNode::Kind::sequence) {
      v_.fail(node, "rules", "expected a list of rules (each item starts with `- name:`), got " +
                                 std::string(describe(node)));
    }
    std::set<std::string> names;
    std::optional<std::string> catch_all;  // first rule without a match: later ones are dead
    for (std::size_t i = 0; i < node.items.size(); ++i) {
      const YamlNode& item = node.items[i];
      const std::string k = "rules[" + std::to_string(i) + "]";
      v_.expect_map(item, k);
      v_.check_keys(item, k, part_keys("rule"));
      Rule rule;
      rule.name = k;
      rule.where = v_.where(item);
      rule.policy = config.defaults;
      rule.sources = config.default_sources;
      if (const YamlNode* name = member(item, "name")) {
        rule.name = v_.string(*name, join_key(k, "name"));
        if (rule.name.empty()) v_.fail(*name, join_key(k, "name"), "must not be empty");
        if (rule.name == "defaults") v_.fail(*name, join_key(k, "name"), "\"defaults\" is reserved; pick another name");
      }
      if (!names.insert(rule.name).second) {
        v_.fail(member(item, "name") ? *member(item, "name") : item, join_key(k, "name"),
                "duplicate rule name \"" + rule.name + "\"");
      }
      if (const YamlNode* match = member(item, "match")) read_match(*match, join_key(k, "match"), rule.match);
      read_policy(item, k, rule.policy, rule.sources);
      if (const YamlNode* f = member(item, "fallback")) {
        rule.fallback = read_fallback(v_, *f, join_key(k, "fallback"));
        rule.sources["fallback"] = v_.where(*f);
      }
      if (const YamlNode* a = member(item, "auth")) {
        rule.auth = read_auth(v_, *a, join_key(k, "auth"));
        rule.sources["auth"] = v_.where(*a);
      }
      if (catch_all) {
        warnings.push_back(v_.where(item) + ": " + k + " (" + rule.name + ") never matches: rule \"" + *catch_all +
                           "\" before it matches every request");
      }
      if (rule.match.host.empty() && rule.match.path.empty() && rule.match.method.empty() &&
          rule.match.headers.empty() && !catch_all) {
        catch_all = rule.name;
      }
      config.rules.push_back(std::move(rule));
    }
  }
};

// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("hots" -> "host"
// is one edit), ASCII case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) { return core::ascii::iequals(x, y); };
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

Config builtin_config() {
  Config config;
  config.defaults = core::Policy::builtin();
  for (const KeyDef& key : kKeys) {
    (key.scope == KeyScope::policy ? config.default_sources : config.settings_sources)[std::string(key.name)] =
        "built-in";
  }
  return config;
}

std::optional<std::string_view> closest_key(std::string_view word, std::span<const std::string_view> candidates) {
  // Keys of user input are short; a 1 KiB "key" gets no suggestion rather than a big table.
  if (word.empty() || word.size() > 64) return std::nullopt;
  std::optional<std::string_view> best;
  std::size_t best_distance = 0;
  for (const auto candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (!best || d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  // About one edit in three letters ("max_attemps", "retry-on", "jiter"); short words get one.
  const std::size_t limit = word.size() <= 4 ? 1 : std::max<std::size_t>(2, word.size() / 3);
  if (best && best_distance <= limit) return best;
  // A truncated or extended key: "base" for "base_ms", "statuses" for "status".
  if (word.size() >= 3) {
    for (const auto candidate : candidates) {
      if (candidate.size() >= 3 &&
          (core::ascii::istarts_with(candidate, word) || core::ascii::istarts_with(word, candidate))) {
        return candidate;
      }
    }
  }
  return std::nullopt;
}

namespace {

// Runs `load` and turns what it throws into the LoadResult's error.
template <typename Load>
LoadResult guarded(const std::string& file, Load load) {
  LoadResult result;
  try {
    load(result);
  } catch (...) {
    result.config.reset();
    result.error = current_load_error(file + ": ");
  }
  return result;
}

}  // namespace

LoadResult parse_config_tree(const YamlNode& root, std::string_view name) {
  const std::string file(name);
  return guarded(file, [&](LoadResult& result) {
    Loader loader(file);
    result.config = loader.load(root);
    result.warnings = std::move(loader.warnings);
  });
}

LoadResult parse_config(std::string_view yaml, std::string_view name) {
  const std::string file(name);
  return guarded(file, [&](LoadResult& result) {
    auto parsed = parse_yaml(yaml);
    if (auto* error = std::get_if<YamlError>(&parsed)) {
      result.error = error->has_position ? file + ":" + std::to_string(error->at.line) + ":" +
                                               std::to_string(error->at.column) + ": " + error->message
                                         : file + ": " + error->message;
      return;
    }
    Loader loader(file);
    result.config = loader.load(std::get<YamlNode>(parsed));
    result.warnings = std::move(loader.warnings);
  });
}

}  // namespace curlretry::config
