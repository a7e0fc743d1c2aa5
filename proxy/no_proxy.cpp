#include "proxy/no_proxy.h"

#include <algorithm>
#include <array>

#include "config/glob.h"
#include "core/ascii.h"
#include "proxy/request_rules.h"

namespace curlretry::proxy {
namespace {

// The loopback names every launched command gets in its NO_PROXY (which names are loopback at all
// is request_rules' loopback_host).
constexpr std::array<const char*, 3> kLoopback = {"localhost", "127.0.0.1", "::1"};

// `host` is `domain` or a name below it.
bool within(std::string_view host, std::string_view domain) {
  return !domain.empty() && (host == domain || (host.size() > domain.size() && host.ends_with(domain) &&
                                                host[host.size() - domain.size() - 1] == '.'));
}

// The host (or domain) an entry names, lower case, without `*.`, a leading dot or a `:port`.
std::string entry_host(std::string_view entry) {
  std::string host = core::ascii::lower(entry);
  if (host.starts_with("*.")) host.erase(0, 2);
  while (host.starts_with(".")) host.erase(0, 1);
  // A `:port` after a name, an IPv4 literal or a bracketed IPv6 one (`[::1]:3000`).
  const std::size_t colon = host.rfind(':');
  if (colon != std::string::npos && (host.find(':') == colon || (host.front() == '[' && host[colon - 1] == ']')) &&
      colon + 1 < host.size() && host.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    host.erase(colon);
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

// The entries of a NO_PROXY value: split at commas and blanks, empty ones left out.
std::vector<std::string> entries_of(std::string_view value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < value.size()) {
    const std::size_t end = std::min(value.find_first_of(", \t", start), value.size());
    if (end > start) out.emplace_back(value.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The intercept globs whose hosts the proxy may reach: a loopback host only with allow_loopback
// (without it the proxy refuses one, so such an entry must keep the host direct).
bool covers_an_intercepted_host(const std::string& entry, const config::ProxySettings& proxy) {
  if (!proxy.forward.allow_loopback && loopback_host(entry_host(entry))) return false;
  return std::any_of(proxy.intercept.begin(), proxy.intercept.end(),
                     [&entry](const std::string& glob) { return entry_covers(entry, glob); });
}

}  // namespace

bool entry_covers(std::string_view entry, std::string_view glob) {
  const std::string trimmed(core::ascii::strip_trailing(core::ascii::strip_leading(entry, " \t"), " \t"));
  if (trimmed == "*") return true;
  const std::string domain = entry_host(trimmed);
  if (domain.empty()) return false;
  const std::string pattern = core::ascii::lower(glob);
  if (pattern.find_first_of("*?[") == std::string::npos) return within(pattern, domain);
  // A glob: the entry names one of its hosts, or a domain that its fixed suffix lies within.
  if (config::glob_match(pattern, domain, true)) return true;
  return pattern.starts_with("*.") && pattern.find_first_of("*?[", 2) == std::string::npos &&
         within(pattern.substr(2), domain);
}

CommandNoProxy command_no_proxy(const char* current, const config::ProxySettings& proxy, bool drop_covering) {
  CommandNoProxy out;
  std::vector<std::string> kept;
  for (std::string& entry : entries_of(current != nullptr ? current : "")) {
    if (covers_an_intercepted_host(entry, proxy)) {
      out.covering.push_back(entry);
      if (drop_covering) continue;
    }
    kept.push_back(std::move(entry));
  }
  for (const char* host : kLoopback) {
    const bool intercepted = proxy.forward.allow_loopback && std::any_of(proxy.intercept.begin(), proxy.intercept.end(),
                                                                         [host](const std::string& glob) {
                                                                           return config::glob_match(glob, host, true);
                                                                         });
    const bool present =
        std::any_of(kept.begin(), kept.end(), [host](const std::string& e) { return entry_host(e) == host; });
    if (!intercepted && !present) kept.emplace_back(host);
  }
  for (const std::string& entry : kept) out.value += (out.value.empty() ? "" : ",") + entry;
  return out;
}

}  // namespace curlretry::proxy
