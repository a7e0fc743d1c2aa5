#include "config/url.h"
#include "config/text.h"

namespace curlretry::config {
namespace {

using text::lower;

}  // namespace

std::optional<UrlParts> split_url(std::string_view url) {
  UrlParts parts;
  parts.scheme = "http";
  if (const auto colon = url.find("://"); colon != std::string_view::npos && url.find_first_of("/?#") > colon) {
    parts.scheme = lower(url.substr(0, colon));
    url.remove_prefix(colon + 3);
  }
  const auto authority_end = url.find_first_of("/?#");
  std::string_view authority = url.substr(0, authority_end);
  std::string_view rest = authority_end == std::string_view::npos ? std::string_view{} : url.substr(authority_end);

  // userinfo may itself contain '@' when unencoded; the host follows the last one.
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view host = authority;
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = host.substr(1, close - 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (host.empty()) return std::nullopt;
  parts.host = lower(host);

  const auto path_end = rest.find_first_of("?#");
  parts.path = std::string(rest.substr(0, path_end));
  if (parts.path.empty()) parts.path = "/";
  return parts;
}

std::string display_url(const UrlParts& parts) { return parts.host + parts.path; }

}  // namespace curlretry::config
