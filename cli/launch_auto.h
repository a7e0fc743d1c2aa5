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
std::optional<std::string> proxy_only_reason(const std::vector<std::string>& command);

}  // namespace curlretry::cli
