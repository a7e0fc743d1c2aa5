#include "proxy/agent_settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include "config/glob.h"
#include "core/ascii.h"
#include "core/json_cursor.h"
#include "core/log_text.h"
#include "core/url.h"
#include "proxy/agent_file.h"
#include "proxy/request_rules.h"

namespace curlretry::proxy {
namespace {

constexpr int kMaxDepth = 64;  // as deep as a settings file needs, and bounded

// The "env" object at the cursor: the string members named in `names` appended to `out`.
bool read_env(core::JsonCursor& c, const std::vector<std::string_view>& names, std::vector<SettingsValue>& out) {
  c.skip_space();
  if (c.at_end() || c.peek() != '{') return c.skip_value(1);  // not an object: Claude Code ignores it, so do we
  std::string value;
  return c.object([&](const std::string& key) {
    const bool wanted = std::find(names.begin(), names.end(), key) != names.end();
    if (!wanted || c.at_end() || c.peek() != '"') return c.skip_value(2);
    if (!c.string(&value)) return false;
    out.push_back({key, value, {}});
    return true;
  });
}

}  // namespace

std::vector<SettingsValue> settings_env_values(std::string_view json, const std::vector<std::string_view>& names) {
  core::JsonCursor c(json, kMaxDepth);
  std::vector<SettingsValue> out;
  c.skip_bom();
  const bool read =
      c.object([&](const std::string& key) { return key == "env" ? read_env(c, names, out) : c.skip_value(1); });
  c.skip_space();
  return read && c.at_end() ? out : std::vector<SettingsValue>{};
}

std::vector<std::string> claude_settings_files() {
  std::vector<std::string> files;
  const char* config_dir = std::getenv("CLAUDE_CONFIG_DIR");
  const char* home = std::getenv("HOME");
  if (config_dir != nullptr && *config_dir != '\0') {
    files.push_back(std::string(config_dir) + "/settings.json");
  } else if (home != nullptr && *home != '\0') {
    files.push_back(std::string(home) + "/.claude/settings.json");
  }
  files.emplace_back(".claude/settings.json");
  files.emplace_back(".claude/settings.local.json");
  files.emplace_back("/etc/claude-code/managed-settings.json");
  std::vector<std::string> drop_ins;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/etc/claude-code/managed-settings.d", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".json") drop_ins.push_back(it->path().string());
  }
  std::sort(drop_ins.begin(), drop_ins.end());
  files.insert(files.end(), drop_ins.begin(), drop_ins.end());
  return files;
}

std::vector<SettingsValue> claude_settings_values(const std::vector<std::string_view>& names) {
  std::vector<SettingsValue> out;
  for (const std::string& file : claude_settings_files()) {
    const std::string text = read_agent_file(file);
    if (text.empty()) continue;
    for (SettingsValue& value : settings_env_values(text, names)) {
      value.file = file;
      out.push_back(std::move(value));
    }
  }
  return out;
}

std::string claude_settings_bypass(std::string_view command, const std::vector<std::string_view>& proxy_variables) {
  if (std::filesystem::path(command).filename() != "claude") return {};
  for (const SettingsValue& set : claude_settings_values(proxy_variables)) {
    if (set.value.empty()) continue;
    return "curlretry: proxy: Claude Code's settings file " + core::log_text::escape(set.file) + " sets " + set.name +
           ", which claude uses in place of curlretry's proxy: none of its requests is retried (set it in your shell "
           "instead: curlretry's proxy then reaches the providers through it)";
  }
  return {};
}

namespace {

// `names` as claude sees them: the environment, then its settings' env blocks over it, in file
// order; the last of a name is the one claude uses.
std::vector<SettingsValue> claude_sees(const std::vector<std::string_view>& names) {
  std::vector<SettingsValue> seen;
  for (const std::string_view name : names) {
    if (const char* set = std::getenv(std::string(name).c_str())) seen.push_back({std::string(name), set, {}});
  }
  for (SettingsValue& set : claude_settings_values(names)) seen.push_back(std::move(set));
  return seen;
}

SettingsValue last_of(const std::vector<SettingsValue>& seen, std::string_view name) {
  SettingsValue out;
  for (const SettingsValue& set : seen) {
    if (set.name == name) out = set;
  }
  return out;
}

// A switch as Claude Code reads its CLAUDE_CODE_* flags: 1, true, yes or on, in any case.
bool claude_flag(std::string_view value) {
  const std::string v = core::ascii::lower(core::ascii::trim(value));
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

}  // namespace

std::optional<SettingsValue> claude_bedrock_gateway() {
  const std::vector<SettingsValue> seen =
      claude_sees({"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_SKIP_BEDROCK_AUTH", "ANTHROPIC_BEDROCK_BASE_URL"});
  if (!claude_flag(last_of(seen, "CLAUDE_CODE_USE_BEDROCK").value) ||
      !claude_flag(last_of(seen, "CLAUDE_CODE_SKIP_BEDROCK_AUTH").value)) {
    return std::nullopt;
  }
  SettingsValue base = last_of(seen, "ANTHROPIC_BEDROCK_BASE_URL");
  if (base.value.empty()) return std::nullopt;
  return base;
}

std::string claude_bedrock_unretried(std::string_view command, const std::vector<std::string>& intercept) {
  if (std::filesystem::path(command).filename() != "claude") return {};
  const std::vector<SettingsValue> seen =
      claude_sees({"CLAUDE_CODE_USE_BEDROCK", "AWS_DEFAULT_REGION", "AWS_REGION", "ANTHROPIC_BEDROCK_BASE_URL"});
  const auto last = [&seen](std::string_view name) { return last_of(seen, name).value; };
  if (!claude_flag(last("CLAUDE_CODE_USE_BEDROCK"))) return {};
  std::string region = last("AWS_REGION");
  if (region.empty()) region = last("AWS_DEFAULT_REGION");
  if (region.empty()) region = "us-east-1";
  std::string host = "bedrock-runtime." + region + ".amazonaws.com";
  std::string glob = "bedrock-runtime.*.amazonaws.com";
  std::string through;
  // A gateway (LiteLLM, a VPC endpoint) the user names takes the region's host's place. A
  // loopback one never meets curlretry's proxy, and a plain http:// one is forwarded and retried.
  if (const std::string base = last("ANTHROPIC_BEDROCK_BASE_URL"); !base.empty()) {
    const std::optional<core::UrlParts> url = core::split_url(base);
    if (!url || url->scheme != "https" || loopback_host(url->host)) return {};
    host = glob = url->host;
    through = " through ANTHROPIC_BEDROCK_BASE_URL";
  }
  if (std::any_of(intercept.begin(), intercept.end(),
                  [&host](const std::string& g) { return config::glob_match(g, host, true); })) {
    return {};
  }
  return "curlretry: proxy: claude uses Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK)" + through + ": its requests go to " +
         core::log_text::escape(host) +
         ", which curlretry does not intercept unless told (they are signed over their headers), so none of them "
         "is retried; to retry them, add " +
         core::log_text::escape(glob) + " to proxy.intercept in your config";
}

}  // namespace curlretry::proxy
