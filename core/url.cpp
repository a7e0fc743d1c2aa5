#include "core/url.h"

#include "core/ascii.h"

namespace curlretry::core {
namespace {

// What curl's hostname_check() rejects, less '%' (curl decodes a percent-encoded host first).
constexpr std::string_view kBadHostChars = " \r\n\t/:#?!@{}[]\\$'\"^`*<>=;,+&()";

// Decimal, leading zeros allowed, at most 65535 (curl reads it with strtol).
bool valid_port(std::string_view port) {
  unsigned value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > 65535) return false;
  }
  return true;
}

// An IPv6 literal keeps its colons; anything else curl rejects in a host name is refused.
bool valid_host(std::string_view host, bool bracketed) {
  for (char c : host) {
    if (c == ':' && bracketed) continue;
    if (kBadHostChars.find(c) != std::string_view::npos) return false;
  }
  return true;
}

}  // namespace

std::string UrlParts::host_path() const { return host + path; }

std::string UrlParts::display() const {
  const bool v6 = host.find(':') != std::string::npos;
  std::string out;
  if (v6) out += '[';
  out += host;
  if (v6) out += ']';
  if (!port.empty()) out += ':' + port;
  out += path;
  return out;
}

std::optional<UrlParts> split_url(std::string_view url, std::string* why) {
  auto refuse = [why](const char* reason) -> std::optional<UrlParts> {
    if (why) *why = reason;
    return std::nullopt;
  };
  UrlParts parts;
  if (const auto colon = url.find("://"); colon != std::string_view::npos && url.find_first_of("/?#") > colon) {
    parts.scheme = ascii::lower(url.substr(0, colon));
    url.remove_prefix(colon + 3);
  }
  const auto authority_end = url.find_first_of("/?#");
  std::string_view authority = url.substr(0, authority_end);
  const std::string_view rest =
      authority_end == std::string_view::npos ? std::string_view{} : url.substr(authority_end);

  if (const auto at = authority.find('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view host = authority;
  std::string_view port;
  bool bracketed = false;
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    const std::string_view after = close == std::string_view::npos ? "" : host.substr(close + 1);
    if (close == std::string_view::npos || (!after.empty() && after.front() != ':')) {
      return refuse("has a malformed IPv6 address");
    }
    if (!after.empty()) port = after.substr(1);
    host = host.substr(1, close - 1);
    bracketed = true;
  } else if (const auto colon = host.find(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  // "host:" with nothing after the colon is the default port, as browsers and curl read it.
  if (!port.empty() && !valid_port(port)) return refuse("has a port that is not a number from 0 to 65535");
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (host.empty()) return refuse("has no host");
  if (!valid_host(host, bracketed)) return refuse("has a character curl refuses in its host");
  parts.host = ascii::lower(host);
  parts.port = std::string(port);

  const std::string_view path = rest.substr(0, rest.find_first_of("?#"));
  if (!path.empty()) parts.path = std::string(path);
  return parts;
}

}  // namespace curlretry::core
