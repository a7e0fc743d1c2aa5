// Pi signed in to a subscription (its /login: "ChatGPT Plus/Pro (Codex)", "GitHub Copilot") sends
// that provider's requests to a host curlretry intercepts only when told: chatgpt.com (see
// proxy/codex_auth.h) and GitHub Copilot's API (api.*.githubcopilot.com, reached with a token
// traded from GitHub's own API; not tried here). Left alone, those requests go through a blind
// tunnel and none is retried; the launcher says so, once per such sign-in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace curlretry::proxy {

// The providers of Pi's auth.json text signed in by OAuth (`"type": "oauth"`), in file order;
// none when the text is not one JSON object.
std::vector<std::string> pi_oauth_providers(std::string_view auth_json);

// When COMMAND is pi and its auth.json (pi_agent_file, a regular file of at most 1 MiB that this
// user or root owns) holds an OAuth sign-in to openai-codex or github-copilot whose host no glob
// of `intercept` matches: for each, the line saying that none of that provider's requests is
// retried, and how to have them retried. Empty otherwise.
std::vector<std::string> pi_signed_in_unretried(std::string_view command, const std::vector<std::string>& intercept);

}  // namespace curlretry::proxy
