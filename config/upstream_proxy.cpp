#include "config/upstream_proxy.h"

#include <optional>

#include "core/url.h"

namespace curlretry::config {

std::string upstream_proxy_problem(std::string_view url) {
  for (const char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return "a proxy URL has no spaces or control characters";
  }
  std::string why;
  const std::optional<core::UrlParts> parts = core::split_url(url, &why);
  if (!parts) return "not a proxy URL: it " + why;
  if (parts->scheme != "http") {
    return "its scheme is " + parts->scheme + "://; curlretry's proxy goes through http:// proxies only";
  }
  // What follows the authority: nothing, or one '/'. A path, query or fragment means nothing to a
  // proxy, so it is a mistake in the URL, not something to drop silently.
  const std::size_t scheme = url.find("://");
  const std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  const std::size_t end = rest.find_first_of("/?#");
  if (end != std::string_view::npos && rest.substr(end) != "/") return "a proxy URL has no path, query or fragment";
  return {};
}

}  // namespace curlretry::config
