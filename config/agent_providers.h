// The providers curlretry knows without a config file (the hosts of packaging/examples/): what
// `curlretry -- AGENT` intercepts when AGENT cannot load libcurl. One table, read by the proxy
// (its intercept list under --builtin-providers) and by docs/PROXY.md's list.
#pragma once

#include <string_view>
#include <vector>

namespace curlretry::config {

struct BuiltinProvider {
  std::string_view name;          // "anthropic"
  std::string_view host;  // the API host its SDKs and agents call: a proxy.intercept glob
};

// In the order of packaging/examples/README.md.
const std::vector<BuiltinProvider>& builtin_providers();

// Their hosts, as proxy.intercept globs, in table order.
std::vector<std::string_view> builtin_provider_hosts();

}  // namespace curlretry::config
