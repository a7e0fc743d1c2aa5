#include "config/keys.h"

#include <algorithm>

namespace curlretry::config {

std::vector<std::string_view> file_keys(KeyScope scope, std::string_view section) {
  std::vector<std::string_view> out;
  for (const KeyDef& key : kKeys) {
    if (key.scope != scope || !key.in_file) continue;
    std::string_view rest = key.name;
    if (!section.empty()) {
      if (!rest.starts_with(section) || rest.size() <= section.size() || rest[section.size()] != '.') continue;
      rest.remove_prefix(section.size() + 1);
    }
    const std::string_view child = rest.substr(0, rest.find('.'));
    if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
  }
  return out;
}

std::vector<std::string_view> part_keys(std::string_view part) {
  std::vector<std::string_view> out;
  for (const PartKey& entry : kPartKeys) {
    if (entry.part != part) continue;
    if (entry.key == "*") {
      for (const std::string_view key : file_keys(KeyScope::policy, "")) out.push_back(key);
    } else {
      out.push_back(entry.key);
    }
  }
  return out;
}

std::string_view key_set_by(std::string_view variable) {
  for (const KeyDef& key : kKeys) {
    if (!variable.empty() && (key.env == variable || key.legacy_env == variable)) return key.name;
  }
  return variable;  // unreachable for the variables env.cpp reads (the table test pins that)
}

}  // namespace curlretry::config
