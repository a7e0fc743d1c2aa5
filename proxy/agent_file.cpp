#include "proxy/agent_file.h"

#include <cstddef>

#include "proxy/ca_files.h"

namespace curlretry::proxy {

namespace {
constexpr std::size_t kMaxAgentFileBytes = 1 << 20;
}  // namespace

std::string read_agent_file(const std::string& path) {
  // read_file stops at the bound: a text that reaches it may be cut, and half a file is not read.
  std::string text = read_file(path, kMaxAgentFileBytes, /*owned=*/true);
  if (text.size() >= kMaxAgentFileBytes) return {};
  return text;
}

}  // namespace curlretry::proxy
