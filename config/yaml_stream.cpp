#include "config/yaml_stream.h"

#include <string_view>

#include "config/keys.h"

namespace curlretry::config {
namespace {

// Event types are what follows `event:` on an SSE line: no line breaks, not empty.
std::vector<std::string> event_names(const Values& v, const YamlNode& node, const std::string& key) {
  std::vector<std::string> names = v.strings(node, key, false);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].find_first_of("\r\n") != std::string::npos) {
      v.fail(node.kind == YamlNode::Kind::sequence ? node.items[i] : node, key + "[" + std::to_string(i) + "]",
             "an event type cannot contain a line break");
    }
  }
  return names;
}

}  // namespace

void read_stream(const Values& v, const YamlNode& node, const std::string& key, core::StreamRules& rules,
                 Sources& sources) {
  v.expect_map(node, key);
  v.check_keys(node, key, file_keys(KeyScope::policy, "stream"));
  for (const auto& [name, value] : node.entries) {
    const std::string k = join_key(key, name.text);
    const std::string& n = name.text;
    if (n == "hold") {
      rules.hold = v.boolean(value, k);
    } else if (n == "hold_max_bytes") {
      rules.hold_max_bytes = static_cast<std::size_t>(v.integer(value, k, 0, kMaxHoldBytes, "bytes, 0..67108864"));
    } else if (n == "content_events") {
      rules.content_events = event_names(v, value, k);
    } else if (n == "setup_events") {
      rules.setup_events = event_names(v, value, k);
    }
    sources["stream." + n] = v.where(value);
  }
}

}  // namespace curlretry::config
