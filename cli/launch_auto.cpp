#include "cli/launch_auto.h"

#include <filesystem>

#include "cli/doctor.h"
#include "config/agent_providers.h"

namespace curlretry::cli {
namespace {

// Runtimes whose HTTP stack is their own (never libcurl) and whose programs are API clients:
// the agents of docs/PROXY.md run on them.
bool is_own_http_runtime(const std::string& file) {
  const std::string name = std::filesystem::path(file).filename().string();
  for (const char* runtime : {"node", "nodejs", "bun", "deno"}) {
    if (name == runtime) return true;
  }
  return name.rfind("python", 0) == 0;
}

}  // namespace

bool routed_by_default(const Diagnosis& d) {
  if (d.verdict == DoctorVerdict::not_reachable) return true;
  if (d.verdict != DoctorVerdict::nothing_to_do) return false;
  bool runtime = is_own_http_runtime(d.program);
  for (const std::string& file : d.chain) runtime = runtime || is_own_http_runtime(file);
  return runtime || d.static_program || d.bun_executable;
}

std::optional<ProxyPath> proxy_path(const std::vector<std::string>& command) {
  if (command.empty()) return std::nullopt;
  const Diagnosis d = diagnose(command);
  if (!routed_by_default(d)) return std::nullopt;
  const std::string name = std::filesystem::path(command[0]).filename().string();
  ProxyPath out;
  out.reason = d.verdict == DoctorVerdict::not_reachable
                   ? name + " cannot be reached by the preload (" + d.summary + ")"
                   : name + " does not load libcurl";
  // Node 20's fetch ignores HTTPS_PROXY: the official SDKs on it are reached by their base URL.
  bool node = false;
  for (const std::string& file : d.chain) {
    const std::string base = std::filesystem::path(file).filename().string();
    node = node || base == "node" || base == "nodejs";
  }
  out.base_url_routes = node && !config::honours_https_proxy(name);
  return out;
}

}  // namespace curlretry::cli
