// Codex signed in with ChatGPT (its "Sign in with ChatGPT", what it offers first) sends its model
// requests to chatgpt.com/backend-api/codex. curlretry does not intercept chatgpt.com unless told:
// Cloudflare there answers clients it does not recognise with a 403 challenge page (reported for
// other programs sending Codex's own token), and a proxy's TLS is such a client, so intercepting it
// by default could fail every request of a setup that works without curlretry. Left alone, those
// requests go through a blind tunnel and none is retried; the launcher says so, once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace curlretry::proxy {

// Why chatgpt.com is left to the config, as the lines for Codex and Pi signed in with ChatGPT say it.
inline constexpr std::string_view kChatgptLeftOut = "its Cloudflare may refuse a client other than Codex itself";

// Whether the text of Codex's auth.json says it is signed in with ChatGPT: a top-level "tokens"
// object, and no "auth_mode" naming an API key.
bool codex_signed_in_with_chatgpt(std::string_view auth_json);

// When COMMAND is codex, signed in with ChatGPT (<CODEX_HOME or ~/.codex>/auth.json, a regular
// file of at most 1 MiB that this user or root owns), and no glob of `intercept` matches
// chatgpt.com: the line saying that none of its model requests is retried, and how to have them
// retried. "" otherwise.
std::string codex_chatgpt_unretried(std::string_view command, const std::vector<std::string>& intercept);

}  // namespace curlretry::proxy
