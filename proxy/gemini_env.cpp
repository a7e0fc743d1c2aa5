#include "proxy/gemini_env.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/ascii.h"
#include "proxy/agent_file.h"

namespace curlretry::proxy {
namespace {

bool key_char(char c) {
  const char l = core::ascii::lower(c);
  return core::ascii::is_digit(c) || (l >= 'a' && l <= 'z') || c == '_' || c == '.' || c == '-';
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The value after the separator, from `i` to the end of its line (or of its closing quote, which
// may be on a later line).
std::string value_at(std::string_view text, std::size_t& i) {
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i < text.size() && (text[i] == '\'' || text[i] == '"' || text[i] == '`')) {
    const char quote = text[i];
    std::size_t end = i + 1;
    while (end < text.size() && text[end] != quote) end += text[end] == '\\' ? 2 : 1;
    if (end < text.size()) {
      std::string value(text.substr(i + 1, end - i - 1));
      i = end + 1;
      if (quote == '"') {
        std::string expanded;
        for (std::size_t k = 0; k < value.size(); ++k) {
          if (value[k] == '\\' && k + 1 < value.size() && (value[k + 1] == 'n' || value[k + 1] == 'r')) {
            expanded.push_back(value[++k] == 'n' ? '\n' : '\r');
          } else {
            expanded.push_back(value[k]);
          }
        }
        value = std::move(expanded);
      }
      return value;
    }
  }
  const std::size_t start = i;
  while (i < text.size() && text[i] != '\n' && text[i] != '\r' && text[i] != '#') ++i;
  std::string_view bare = text.substr(start, i - start);
  while (!bare.empty() && (bare.back() == ' ' || bare.back() == '\t')) bare.remove_suffix(1);
  return std::string(bare);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> dotenv_values(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    if (text.substr(i, 7) == "export " || text.substr(i, 7) == "export\t") {
      i += 7;
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    }
    const std::size_t key_start = i;
    while (i < text.size() && key_char(text[i])) ++i;
    const std::string key(text.substr(key_start, i - key_start));
    std::size_t j = i;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
    const bool equals = j < text.size() && text[j] == '=';
    const bool colon = j + 1 < text.size() && text[j] == ':' && (text[j + 1] == ' ' || text[j + 1] == '\t');
    if (!key.empty() && (equals || colon)) {
      i = j + 1;
      out.emplace_back(key, value_at(text, i));
    }
    while (i < text.size() && text[i] != '\n') ++i;  // the rest of the line: a comment, or not a variable
  }
  return out;
}

std::string gemini_env_file(const std::string& cwd) {
  const char* home = std::getenv("HOME");
  const std::string home_dir = home != nullptr ? home : "";
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(cwd, ec).lexically_normal();
  for (int depth = 0; !ec && depth < 256; ++depth) {
    for (const char* candidate : {".gemini/.env", ".env"}) {
      const std::string path = (dir / candidate).string();
      if (exists(path)) return path;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  if (home_dir.empty()) return {};
  for (const char* candidate : {"/.gemini/.env", "/.env"}) {
    if (exists(home_dir + candidate)) return home_dir + candidate;
  }
  return {};
}

std::vector<SettingsValue> gemini_env_values(const std::vector<std::string_view>& names) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return {};
  const std::string file = gemini_env_file(cwd.string());
  if (file.empty()) return {};
  const std::string text = read_agent_file(file);
  if (text.empty()) return {};
  std::vector<SettingsValue> out;
  for (auto& [key, value] : dotenv_values(text)) {
    if (std::find(names.begin(), names.end(), key) == names.end() || std::getenv(key.c_str()) != nullptr) continue;
    out.push_back({std::move(key), std::move(value), file});
  }
  return out;
}

}  // namespace curlretry::proxy
