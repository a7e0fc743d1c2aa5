// The parts of a request URL that curlretry uses, split one way for everything: rule matching in
// the shim, `curlretry explain`, and the shim's log lines. Userinfo, query and fragment are dropped
// here, before anything else sees the URL (they carry secrets).
//
// The authority is read as libcurl's URL parser reads it, so that a rule matches in `explain`
// exactly when it matches in the host process: the port follows the FIRST ':' outside brackets and
// must be a decimal number up to 65535 ("http://a:b:c/x" is refused, as curl refuses it with
// CURLE_URL_MALFORMAT), userinfo ends at the first '@' (so "http://a@b@host/" has the host "b@host",
// which curl refuses too), and a host with a character curl rejects is refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace curlretry::core {

struct UrlParts {
  std::string scheme = "http";  // lower case; "http" when the URL has none (as curl assumes)
  std::string host;             // lower case, no userinfo, no port, IPv6 without brackets, no trailing dot
  std::string port;             // digits as written; empty when the URL names none
  std::string path = "/";       // without query or fragment; "/" when empty

  // "host/path": the request as `explain` shows it.
  std::string host_path() const;
  // "host[:port]/path" (IPv6 in brackets): what a log line shows.
  std::string display() const;
};

// nullopt when curl would refuse the URL's authority: no host ("http:///x", "", "/just/a/path"),
// an unclosed or trailed '[' ("http://[::1/x", "http://[::1]x/"), a port that is not a number up
// to 65535, or a host with a character curl rejects (space, '@', '!', ...). Then `why`, when
// given, says which ("has no host", ...), to follow the quoted URL in an error.
std::optional<UrlParts> split_url(std::string_view url, std::string* why = nullptr);

}  // namespace curlretry::core
