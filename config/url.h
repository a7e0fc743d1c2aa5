// The parts of a request URL that rules match on, derived the same way everywhere (the shim and
// `curlretry explain`), so a rule that matches in `explain` matches in the host process.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace curlretry::config {

struct UrlParts {
  std::string scheme;  // lower case; "http" when the URL has none (as curl assumes)
  std::string host;    // lower case, no userinfo, no port, IPv6 without brackets, no trailing dot
  std::string path;    // without query or fragment; "/" when empty
};

// nullopt when there is no host ("http:///x", "", "/just/a/path").
std::optional<UrlParts> split_url(std::string_view url);

// "host/path" for log lines and `explain`: never userinfo, query or fragment.
std::string display_url(const UrlParts& parts);

}  // namespace curlretry::config
