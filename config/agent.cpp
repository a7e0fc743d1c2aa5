#include "config/agent.h"

#include "config/config.h"
#include "config/glob.h"

namespace curlretry::config {

bool headers_match(const std::vector<HeaderMatch>& want, const RequestHeaders& have) {
  for (const HeaderMatch& m : want) {
    bool found = false;
    for (const auto& [name, value] : have) {
      if (name == m.name && glob_match(m.glob, value, false)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

bool Config::has_header_rules() const {
  for (const Rule& rule : rules) {
    if (!rule.match.headers.empty()) return true;
  }
  return false;
}

}  // namespace curlretry::config
