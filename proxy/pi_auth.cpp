#include "proxy/pi_auth.h"

#include <algorithm>
#include <filesystem>

#include "config/glob.h"
#include "core/json_cursor.h"
#include "core/log_text.h"
#include "proxy/agent_file.h"
#include "proxy/codex_auth.h"
#include "proxy/pi_models.h"

namespace curlretry::proxy {
namespace {

constexpr int kPiAuthMaxDepth = 64;

struct Subscription {
  std::string_view provider;  // Pi's name for it, the auth.json key
  std::string_view what;      // as its /login names it
  std::string_view host;      // one host it reaches, tested against the intercept globs
  std::string_view shown;     // the hosts it reaches, as the line names them
  std::string_view glob;      // what to add to proxy.intercept
  std::string_view why;       // why curlretry leaves it to the config
};

constexpr Subscription kSubscriptions[] = {
    {"openai-codex", "ChatGPT", "chatgpt.com", "chatgpt.com", "chatgpt.com", kChatgptLeftOut},
    // Its host follows the account's plan (individual, business, enterprise).
    {"github-copilot", "GitHub Copilot", "api.individual.githubcopilot.com", "api.*.githubcopilot.com",
     "*.githubcopilot.com", "curlretry has not been tried with Copilot's service"},
};

}  // namespace

std::vector<std::string> pi_oauth_providers(std::string_view auth_json) {
  core::JsonCursor c(auth_json, kPiAuthMaxDepth);
  std::vector<std::string> out;
  std::string type;
  c.skip_bom();
  const bool read = c.object([&](const std::string& provider) {
    if (c.at_end() || c.peek() != '{') return c.skip_value(1);
    bool oauth = false;
    const bool entry = c.object([&](const std::string& key) {
      if (key != "type" || c.at_end() || c.peek() != '"') return c.skip_value(2);
      if (!c.string(&type)) return false;
      oauth = type == "oauth";
      return true;
    });
    if (entry && oauth) out.push_back(provider);
    return entry;
  });
  c.skip_space();
  return read && c.at_end() ? out : std::vector<std::string>{};
}

std::vector<std::string> pi_signed_in_unretried(std::string_view command, const std::vector<std::string>& intercept) {
  if (std::filesystem::path(command).filename() != "pi") return {};
  const std::string file = pi_agent_file("auth.json");
  if (file.empty()) return {};
  const std::string text = read_agent_file(file);
  if (text.empty()) return {};
  const std::vector<std::string> signed_in = pi_oauth_providers(text);
  std::vector<std::string> lines;
  for (const Subscription& s : kSubscriptions) {
    if (std::find(signed_in.begin(), signed_in.end(), s.provider) == signed_in.end()) continue;
    if (std::any_of(intercept.begin(), intercept.end(),
                    [&s](const std::string& glob) { return config::glob_match(glob, s.host, true); })) {
      continue;
    }
    lines.push_back("curlretry: proxy: pi is signed in with " + std::string(s.what) + " (" +
                    core::log_text::escape(file) + "): its requests on that provider (" + std::string(s.provider) +
                    ") go to " + std::string(s.shown) + ", which curlretry does not intercept unless told (" +
                    std::string(s.why) + "), so none of them is retried; to retry them, add " + std::string(s.glob) +
                    " to proxy.intercept in your config");
  }
  return lines;
}

}  // namespace curlretry::proxy
