#include "config/agent_providers.h"

namespace curlretry::config {

const std::vector<BuiltinProvider>& builtin_providers() {
  // Interception keeps each agent on its real host: every agent tested honours HTTPS_PROXY while
  // not all read a base URL (docs/PROXY.md: Codex ignores OPENAI_BASE_URL, Pi reads none). The
  // base-URL routes are for what ignores HTTPS_PROXY: the official SDKs on Node 20's fetch.
  static const std::vector<BuiltinProvider> table{
      {"anthropic", "api.anthropic.com", "ANTHROPIC_BASE_URL", "https://api.anthropic.com"},
      {"openai", "api.openai.com", "OPENAI_BASE_URL", "https://api.openai.com/v1"},
      {"gemini", "generativelanguage.googleapis.com"},
      // What the agents reach when their user signs in instead of setting a key, the way most of
      // them run: Gemini CLI's "Login with Google" (Code Assist), and Vertex AI (Claude Code's and
      // Gemini CLI's Google Cloud mode: regional hosts and the global one). Before, these went
      // through a blind tunnel: none of their 429s or 5xx was retried, and the launch said nothing.
      // Not chatgpt.com, Codex's when signed in with ChatGPT: proxy/codex_auth.h says why.
      {"gemini-code-assist", "cloudcode-pa.googleapis.com"},
      {"vertex", "*-aiplatform.googleapis.com"},
      {"vertex-global", "aiplatform.googleapis.com"},
      {"zai", "api.z.ai"},
      {"glm", "open.bigmodel.cn"},
      {"deepseek", "api.deepseek.com"},
      {"openrouter", "openrouter.ai"},
      {"mistral", "api.mistral.ai"},
      {"groq", "api.groq.com"},
      {"xai", "api.x.ai"},
  };
  return table;
}

std::vector<std::string_view> builtin_provider_hosts() {
  std::vector<std::string_view> out;
  for (const BuiltinProvider& p : builtin_providers()) out.push_back(p.host);
  return out;
}

bool honours_https_proxy(std::string_view agent) {
  // Issue 26's runs of the real CLIs from npm: all four took HTTPS_PROXY and the CA variables.
  for (const char* name : {"claude", "codex", "gemini", "pi"}) {
    if (agent == name) return true;
  }
  return false;
}

std::vector<ProxyRoute> builtin_provider_routes() {
  std::vector<ProxyRoute> out;
  for (const BuiltinProvider& p : builtin_providers()) {
    if (!p.base_url_env.empty()) out.push_back({std::string(p.name), std::string(p.upstream), std::string(p.base_url_env)});
  }
  return out;
}

}  // namespace curlretry::config
