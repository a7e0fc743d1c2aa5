// The launcher's automatic path: `curlretry -- COMMAND` for a COMMAND that will not load libcurl
// runs it through the user's shared proxy, intercepting the built-in providers' hosts
// (config/agent_providers.h), instead of preloading a library it would never call.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace curlretry::cli {

// Why COMMAND goes through the proxy ("node does not load libcurl"), or nullopt when the preload
// is the way: doctor says it links libcurl (or runs something that does), or it cannot tell (a
// shell or any other dynamic program may start libcurl programs, which must keep the preload and
// never be routed). Through the proxy: doctor's not-reachable (Go, libcurl compiled in, musl), and
// nothing-to-do for JavaScript and Python runtimes and static programs (Rust, Bun, Deno builds).
struct ProxyPath {
  std::string reason;            // "node does not load libcurl"
  bool base_url_routes = false;  // also the built-in providers' base-URL routes (a Node program
                                 // other than the agents known to honour HTTPS_PROXY)
};
std::optional<ProxyPath> proxy_path(const std::vector<std::string>& command);

struct Diagnosis;

// The rule proxy_only_reason() applies to doctor's diagnosis of COMMAND.
bool routed_by_default(const Diagnosis& d);

// What doctor advises for a COMMAND routed_by_default().
inline constexpr const char* kRoutedAdvice =
    "curlretry -- COMMAND runs it through curlretry's local proxy, no config needed: the API hosts of the providers "
    "curlretry knows (Anthropic, OpenAI, Gemini, z.ai, DeepSeek, OpenRouter, ...) intercepted through HTTPS_PROXY "
    "and the local CA; other hosts: proxy.intercept in the config";

}  // namespace curlretry::cli
