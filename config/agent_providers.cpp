#include "config/agent_providers.h"

namespace curlretry::config {

const std::vector<BuiltinProvider>& builtin_providers() {
  // Hosts only, no base-URL variables: interception keeps each agent on its real host, and every
  // agent tested honours HTTPS_PROXY while not all read a base URL (docs/PROXY.md: Codex ignores
  // OPENAI_BASE_URL, Pi reads none).
  static const std::vector<BuiltinProvider> table{
      {"anthropic", "api.anthropic.com"},
      {"openai", "api.openai.com"},
      {"gemini", "generativelanguage.googleapis.com"},
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

}  // namespace curlretry::config
