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
      // Claude Code on Microsoft Foundry (RESOURCE.services.ai.azure.com/anthropic), and Azure
      // OpenAI (Pi's azure-openai-responses, a Codex provider on Azure): keyed API hosts, unsigned.
      {"foundry", "*.services.ai.azure.com"},
      {"azure-openai", "*.openai.azure.com"},
      {"zai", "api.z.ai"},
      {"glm", "open.bigmodel.cn"},
      {"deepseek", "api.deepseek.com"},
      {"openrouter", "openrouter.ai"},
      {"mistral", "api.mistral.ai"},
      {"groq", "api.groq.com"},
      {"xai", "api.x.ai"},
      // The rest of the API hosts Pi's built-in providers reach (pi-ai's model table): a user who
      // picks one (`pi --provider minimax`) got a blind tunnel and no retries, without a word.
      // Not its GitHub Copilot hosts (a token traded from GitHub's own API, not tried here), nor
      // the Cloudflare API's (Workers AI shares api.cloudflare.com with every other Cloudflare call).
      {"moonshot", "api.moonshot.ai"},
      {"moonshot-cn", "api.moonshot.cn"},
      {"kimi-coding", "api.kimi.com"},
      {"minimax", "api.minimax.io"},
      {"minimax-cn", "api.minimaxi.com"},
      {"cerebras", "api.cerebras.ai"},
      {"fireworks", "api.fireworks.ai"},
      {"huggingface", "router.huggingface.co"},
      {"vercel-ai-gateway", "ai-gateway.vercel.sh"},
      {"cloudflare-ai-gateway", "gateway.ai.cloudflare.com"},
      {"opencode", "opencode.ai"},
      {"xiaomi", "api.xiaomimimo.com"},
      {"xiaomi-token-plan", "token-plan-*.xiaomimimo.com"},
      // Alibaba Cloud Model Studio (DashScope), where Qwen Code sends its requests (its Coding
      // Plan, Token Plan and API-key setups: its docs and bundle) and oh-my-pi's alibaba-* providers
      // reach: keyed OpenAI-compatible hosts, unsigned. Before, a blind tunnel, without a word.
      {"dashscope", "dashscope.aliyuncs.com"},
      {"dashscope-intl", "dashscope-intl.aliyuncs.com"},
      {"dashscope-us", "dashscope-us.aliyuncs.com"},
      {"dashscope-coding-plan", "*.dashscope.aliyuncs.com"},  // coding., coding-intl., cn-hongkong.
      {"modelstudio-token-plan", "token-plan.*.maas.aliyuncs.com"},
  };
  return table;
}

const std::vector<std::string_view>& provider_base_url_variables() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const BuiltinProvider& p : builtin_providers()) {
      if (!p.base_url_env.empty()) out.push_back(p.base_url_env);
    }
    // Each read by a real agent of issue 26's four (their bundles, their docs) in one of its modes.
    for (std::string_view name : {
             "ANTHROPIC_VERTEX_BASE_URL",   // Claude Code on Vertex AI through a gateway
             "ANTHROPIC_FOUNDRY_BASE_URL",  // Claude Code on Microsoft Foundry through a gateway
             "GOOGLE_GEMINI_BASE_URL",      // Gemini CLI (and Google's GenAI SDKs) with an API key
             "GOOGLE_VERTEX_BASE_URL",      // the same on Vertex AI
             "CODE_ASSIST_ENDPOINT",        // Gemini CLI signed in with Google
             "AZURE_OPENAI_BASE_URL",       // Pi on Azure OpenAI
         }) {
      out.push_back(name);
    }
    return out;
  }();
  return names;
}

const std::vector<std::string_view>& opt_in_provider_hosts() {
  static const std::vector<std::string_view> hosts{"chatgpt.com", "bedrock-runtime.*.amazonaws.com",
                                                   "*.githubcopilot.com"};
  return hosts;
}

std::vector<std::string_view> builtin_provider_hosts() {
  std::vector<std::string_view> out;
  for (const BuiltinProvider& p : builtin_providers()) out.push_back(p.host);
  return out;
}

bool honours_https_proxy(std::string_view agent) {
  // Issue 26's runs of the real CLIs from npm: all four took HTTPS_PROXY and the CA variables; so
  // does Qwen Code (test_agents.QwenCode), which would also take a route's OPENAI_BASE_URL over its
  // own .env file's.
  for (const char* name : {"claude", "codex", "gemini", "pi", "qwen"}) {
    if (agent == name) return true;
  }
  return false;
}

std::vector<ProxyRoute> builtin_provider_routes() {
  std::vector<ProxyRoute> out;
  for (const BuiltinProvider& p : builtin_providers()) {
    if (!p.base_url_env.empty())
      out.push_back({std::string(p.name), std::string(p.upstream), std::string(p.base_url_env)});
  }
  return out;
}

}  // namespace curlretry::config
