#include "proxy/pi_models.h"

#include <cstdlib>

#include "core/json_cursor.h"
#include "proxy/agent_file.h"

namespace curlretry::proxy {
namespace {

constexpr int kModelsMaxDepth = 64;  // a models.json nests a few levels

}  // namespace

std::vector<std::string> pi_provider_base_urls(std::string_view models_json) {
  const std::string text = strip_json_comments(models_json, kPiJsonComments);
  core::JsonCursor c(text, kModelsMaxDepth);
  std::vector<std::string> out;
  std::string value;
  const auto provider = [&](const std::string&) {
    if (c.at_end() || c.peek() != '{') return c.skip_value(2);
    return c.object([&](const std::string& key) {
      if (key != "baseUrl" || c.at_end() || c.peek() != '"') return c.skip_value(3);
      if (!c.string(&value)) return false;
      out.push_back(value);
      return true;
    });
  };
  c.skip_bom();
  const bool read = c.object([&](const std::string& key) {
    if (key != "providers" || c.at_end() || c.peek() != '{') return c.skip_value(1);
    return c.object(provider);
  });
  c.skip_space();
  return read && c.at_end() ? out : std::vector<std::string>{};
}

std::string pi_agent_file(std::string_view name) {
  const char* home = std::getenv("HOME");
  const std::string home_dir = home != nullptr ? home : "";
  std::string dir;
  if (const char* set = std::getenv("PI_CODING_AGENT_DIR"); set != nullptr && *set != '\0') {
    dir = set;
    if (dir == "~") {
      dir = home_dir;
    } else if (dir.rfind("~/", 0) == 0) {
      dir = home_dir + dir.substr(1);
    }
  } else if (!home_dir.empty()) {
    dir = home_dir + "/.pi/agent";
  }
  return dir.empty() ? std::string() : dir + "/" + std::string(name);
}

std::vector<std::string> pi_models_base_urls() {
  const std::string file = pi_agent_file("models.json");
  if (file.empty()) return {};
  const std::string text = read_agent_file(file);
  if (text.empty()) return {};
  return pi_provider_base_urls(text);
}

}  // namespace curlretry::proxy
