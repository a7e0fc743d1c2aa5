#include "shim/url_parts.h"

#include "config/text.h"

namespace curlretry::shim {
namespace {

using config::text::lower;

}  // namespace

std::string UrlParts::display() const {
  std::string out;
  bool v6 = host.find(':') != std::string::npos;
  if (v6) out += '[';
  out += host;
  if (v6) out += ']';
  if (!port.empty()) {
    out += ':';
    out += port;
  }
  out += path;
  return out;
}

UrlParts split_url(std::string_view url) {
  UrlParts parts;
  std::string_view rest = url;
  if (auto colon = rest.find("://"); colon != std::string_view::npos &&
      rest.substr(0, colon).find_first_of("/?#") == std::string_view::npos) {
    parts.scheme = lower(rest.substr(0, colon));
    rest.remove_prefix(colon + 3);
  }
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  rest = authority_end == std::string_view::npos ? std::string_view{} : rest.substr(authority_end);
  if (auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    parts.host = lower(authority.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
    if (close != std::string_view::npos && close + 1 < authority.size() && authority[close + 1] == ':')
      parts.port = std::string(authority.substr(close + 2));
  } else {
    size_t colon = authority.find(':');
    parts.host = lower(authority.substr(0, colon));
    if (colon != std::string_view::npos) parts.port = std::string(authority.substr(colon + 1));
  }
  size_t path_end = rest.find_first_of("?#");
  parts.path = std::string(rest.substr(0, path_end));
  if (parts.path.empty()) parts.path = "/";
  return parts;
}

bool is_http_scheme(std::string_view scheme) { return scheme.empty() || scheme == "http" || scheme == "https"; }

bool url_is_http(std::string_view url) {
  // The common spellings first: this runs for every transfer.
  if (url.starts_with("http://") || url.starts_with("https://")) return true;
  size_t colon = url.find("://");
  if (colon == std::string_view::npos || url.substr(0, colon).find_first_of("/?#") != std::string_view::npos)
    return true;
  std::string_view scheme = url.substr(0, colon);
  auto lower_equals = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      char c = a[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != b[i]) return false;
    }
    return true;
  };
  return lower_equals(scheme, "http") || lower_equals(scheme, "https");
}

}  // namespace curlretry::shim
