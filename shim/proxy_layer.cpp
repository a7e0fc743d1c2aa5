#include "shim/proxy_layer.h"

#include <cstdlib>
#include <string>

#include "config/glob.h"

namespace curlretry::shim {

bool retried_by_proxy(std::string_view via, std::string_view intercept, std::string_view primary_ip, long primary_port,
                      const UrlParts& url) {
  const std::size_t colon = via.rfind(':');
  if (via.empty() || colon == std::string_view::npos || primary_ip.empty()) return false;
  if (via.substr(0, colon) != primary_ip || via.substr(colon + 1) != std::to_string(primary_port)) return false;
  if (url.scheme == "http") return true;
  std::size_t start = 0;
  while (start < intercept.size()) {
    const std::size_t comma = std::min(intercept.find(',', start), intercept.size());
    if (comma > start && config::glob_match(intercept.substr(start, comma - start), url.host, true)) return true;
    start = comma + 1;
  }
  return false;
}

namespace {

struct Named {
  std::string via;
  std::string intercept;
};

const Named& named() {
  static const Named value = [] {
    const char* via = std::getenv(kViaProxyVariable);
    const char* intercept = std::getenv(kViaProxyInterceptVariable);
    return Named{via ? via : "", intercept ? intercept : ""};
  }();
  return value;
}

}  // namespace

bool proxy_named() { return !named().via.empty(); }

bool retried_by_own_proxy(std::string_view primary_ip, long primary_port, const UrlParts& url) {
  return retried_by_proxy(named().via, named().intercept, primary_ip, primary_port, url);
}

}  // namespace curlretry::shim
