#include "proxy/codex_auth.h"

#include <algorithm>
#include <filesystem>

#include "config/glob.h"
#include "core/ascii.h"
#include "core/json_cursor.h"
#include "core/log_text.h"
#include "proxy/agent_file.h"
#include "proxy/codex_config.h"

namespace curlretry::proxy {
namespace {

constexpr int kAuthMaxDepth = 64;
constexpr std::string_view kChatgptHost = "chatgpt.com";

}  // namespace

bool codex_signed_in_with_chatgpt(std::string_view auth_json) {
  core::JsonCursor c(auth_json, kAuthMaxDepth);
  c.skip_bom();
  bool tokens = false;
  bool api_key_mode = false;
  std::string value;
  const bool read = c.object([&](const std::string& key) {
    if (key == "tokens" && !c.at_end() && c.peek() == '{') tokens = true;
    if (key != "auth_mode" || c.at_end() || c.peek() != '"') return c.skip_value(1);
    if (!c.string(&value)) return false;
    value = core::ascii::lower(value);
    api_key_mode = value.find("apikey") != std::string::npos || value.find("api_key") != std::string::npos;
    return true;
  });
  c.skip_space();
  return read && c.at_end() && tokens && !api_key_mode;
}

std::string codex_chatgpt_unretried(std::string_view command, const std::vector<std::string>& intercept) {
  if (std::filesystem::path(command).filename() != "codex") return {};
  if (std::any_of(intercept.begin(), intercept.end(),
                  [](const std::string& glob) { return config::glob_match(glob, kChatgptHost, true); })) {
    return {};
  }
  const std::string file = codex_home_file("auth.json");
  if (file.empty()) return {};
  const std::string text = read_agent_file(file);
  if (text.empty() || !codex_signed_in_with_chatgpt(text)) return {};
  return "curlretry: proxy: codex is signed in with ChatGPT (" + core::log_text::escape(file) +
         "): its model requests go to chatgpt.com, which curlretry does not intercept unless told (" +
         std::string(kChatgptLeftOut) +
         "), so none of them is retried; to retry them, add chatgpt.com to proxy.intercept in your config";
}

}  // namespace curlretry::proxy
