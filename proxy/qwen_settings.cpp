#include "proxy/qwen_settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/json_cursor.h"
#include "proxy/agent_settings.h"
#include "proxy/gemini_env.h"

namespace curlretry::proxy {
namespace {

constexpr int kSettingsMaxDepth = 64;  // a settings.json nests a few levels
constexpr int kMaxDirectoryDepth = 256;

std::string home_dir() {
  const char* home = std::getenv("HOME");
  return home != nullptr ? home : "";
}

// A variable's value, or `fallback` when it is unset or empty.
std::string env_or(const char* name, const std::string& fallback) {
  const char* set = std::getenv(name);
  return set != nullptr && *set != '\0' ? set : fallback;
}

// <QWEN_HOME or ~/.qwen>, as qwen resolves it: a leading ~ or ~/ for HOME, a relative one from the
// working directory.
std::string qwen_dir() {
  const std::string home = home_dir();
  std::string dir = env_or("QWEN_HOME", "");
  if (dir.empty()) return home.empty() ? std::string() : home + "/.qwen";
  if (dir == "~") {
    dir = home;
  } else if (dir.rfind("~/", 0) == 0) {
    dir = home + dir.substr(1);
  }
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(dir, ec);
  return ec ? dir : absolute.lexically_normal().string();
}

// The array of model entries at the cursor: each entry's string `baseUrl` appended to `out`.
bool read_models(core::JsonCursor& c, std::vector<std::string>& out) {
  if (c.at_end() || c.peek() != '[') return c.skip_value(2);  // qwen skips such a provider
  c.eat('[');
  c.skip_space();
  if (c.eat(']')) return true;
  std::string value;
  const auto member = [&](const std::string& key) {
    if (key != "baseUrl" || c.at_end() || c.peek() != '"') return c.skip_value(4);
    if (!c.string(&value)) return false;
    out.push_back(value);
    return true;
  };
  do {
    c.skip_space();
    const bool entry = !c.at_end() && c.peek() == '{';
    if (!(entry ? c.object(member) : c.skip_value(3))) return false;
    c.skip_space();
  } while (c.eat(','));
  return c.eat(']');
}

// qwen_provider_base_urls of a text its comments are stripped from already.
std::vector<std::string> provider_base_urls(std::string_view text) {
  core::JsonCursor c(text, kSettingsMaxDepth);
  std::vector<std::string> out;
  c.skip_bom();
  const bool read = c.object([&](const std::string& key) {
    if (key != "modelProviders" || c.at_end() || c.peek() != '{') return c.skip_value(1);
    return c.object([&](const std::string&) { return read_models(c, out); });
  });
  c.skip_space();
  return read && c.at_end() ? out : std::vector<std::string>{};
}

}  // namespace

std::vector<std::string> qwen_provider_base_urls(std::string_view settings_json) {
  return provider_base_urls(strip_json_comments(settings_json, kQwenJsonComments));
}

std::vector<std::string> qwen_settings_files() {
  std::vector<std::string> files{env_or("QWEN_CODE_SYSTEM_DEFAULTS_PATH", "/etc/qwen-code/system-defaults.json")};
  const std::string user_dir = qwen_dir();
  if (!user_dir.empty()) files.push_back(user_dir + "/settings.json");
  // The workspace's file is the user's own when the working directory is HOME: qwen skips it then.
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  const std::string home = home_dir();
  if (!ec && (home.empty() || !std::filesystem::equivalent(cwd, home, ec))) {
    files.push_back((cwd / ".qwen/settings.json").string());
  }
  files.push_back(env_or("QWEN_CODE_SYSTEM_SETTINGS_PATH", "/etc/qwen-code/settings.json"));
  return files;
}

std::vector<std::string> qwen_env_files() {
  std::vector<std::string> files;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::current_path(ec);
  for (int depth = 0; !ec && depth < kMaxDirectoryDepth; ++depth) {
    files.push_back((dir / ".qwen/.env").string());
    files.push_back((dir / ".env").string());
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  const std::string home = home_dir();
  if (const std::string user_dir = qwen_dir(); !user_dir.empty()) files.push_back(user_dir + "/.env");
  if (!home.empty()) {
    files.push_back(home + "/.qwen/.env");
    files.push_back(home + "/.env");
  }
  std::vector<std::string> unique;
  for (std::string& file : files) {
    if (std::find(unique.begin(), unique.end(), file) == unique.end()) unique.push_back(std::move(file));
  }
  return unique;
}

std::vector<SettingsValue> qwen_settings_values(const std::vector<std::string_view>& names) {
  std::vector<SettingsValue> out;
  std::vector<SettingsValue> env_values;
  for (const std::string& file : qwen_settings_files()) {
    const std::string text = strip_json_comments(read_agent_file(file), kQwenJsonComments);
    if (text.empty()) continue;
    for (std::string& url : provider_base_urls(text)) out.push_back({{}, std::move(url), file});
    for (SettingsValue& value : settings_env_values(text, names)) {
      value.file = file;
      env_values.push_back(std::move(value));
    }
  }
  for (const std::string& file : qwen_env_files()) {
    const std::string text = read_agent_file(file);
    if (text.empty()) continue;
    for (auto& [key, value] : dotenv_values(text)) {
      if (std::find(names.begin(), names.end(), key) != names.end()) env_values.push_back({key, value, file});
    }
  }
  for (SettingsValue& value : env_values) {
    if (std::getenv(value.name.c_str()) == nullptr) out.push_back(std::move(value));
  }
  return out;
}

}  // namespace curlretry::proxy
