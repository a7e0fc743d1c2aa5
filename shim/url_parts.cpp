#include "shim/url_parts.h"

#include "core/ascii.h"

namespace curlretry::shim {

UrlParts split_url(std::string_view url) {
  if (auto parts = core::split_url(url)) return std::move(*parts);
  UrlParts refused;
  refused.scheme.clear();
  return refused;
}

bool url_is_http_spelled(std::string_view url) {
  // Any other spelling (url_is_http() tested "http://" and "https://").
  size_t colon = url.find("://");
  if (colon == std::string_view::npos || url.substr(0, colon).find_first_of("/?#") != std::string_view::npos)
    return true;
  std::string_view scheme = url.substr(0, colon);
  return core::ascii::iequals(scheme, "http") || core::ascii::iequals(scheme, "https");
}

}  // namespace curlretry::shim
