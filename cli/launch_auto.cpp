#include "cli/launch_auto.h"

#include <filesystem>

#include "cli/doctor.h"

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

std::optional<std::string> proxy_only_reason(const std::vector<std::string>& command) {
  if (command.empty()) return std::nullopt;
  const Diagnosis d = diagnose(command);
  const std::string name = std::filesystem::path(command[0]).filename().string();
  if (d.verdict == DoctorVerdict::not_reachable) return name + " cannot be reached by the preload (" + d.summary + ")";
  if (d.verdict != DoctorVerdict::nothing_to_do) return std::nullopt;
  bool runtime = is_own_http_runtime(d.program);
  for (const std::string& file : d.chain) runtime = runtime || is_own_http_runtime(file);
  if (!runtime && !d.static_program && !d.bun_executable) return std::nullopt;
  return name + " does not load libcurl";
}

}  // namespace curlretry::cli
