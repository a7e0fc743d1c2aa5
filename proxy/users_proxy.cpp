#include "proxy/users_proxy.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "core/url.h"
#include "proxy/ensure.h"
#include "proxy/parent_proxy.h"
#include "proxy/request_rules.h"
#include "shim/proxy_layer.h"

namespace curlretry::proxy {
namespace {

// Whether the loopback proxy `url` (of the URL `value`) proves it is this user's curlretry proxy:
// one started by hand on another port that the shell exports, say. Going through it as through a
// company's would put two retry layers on each request, and its interception a CA in the way that
// curlretry's proxy does not trust (every intercepted request then failed with 502). The token
// probed with is the URL's password, which COMMAND would present to that address anyway.
bool proves_curlretry_proxy(std::string_view value, const core::UrlParts& url, const std::string& port) {
  boost::system::error_code bad;
  const auto address = boost::asio::ip::make_address(url.host == "localhost" ? "127.0.0.1" : url.host, bad);
  if (bad || !address.is_loopback()) return false;  // split_url checked the port: digits, at most 65535
  const std::optional<ParentProxy> parent = parent_proxy(std::string(value));
  const std::string token = parent ? presented_token(parent->authorization) : std::string();
  return listens_as_ours({address, static_cast<std::uint16_t>(std::stoul(port))}, token);
}

}  // namespace

bool names_curlretry_proxy(std::string_view value, const boost::asio::ip::tcp::endpoint& where) {
  const std::optional<core::UrlParts> url = core::split_url(value);
  if (!url) return false;
  const std::string port = url->port.empty() ? "1080" : url->port;  // libcurl's default proxy port
  const auto same = [&](const std::string& host, const std::string& its_port) {
    return its_port == port &&
           (url->host == host || (url->host == "localhost" && (host == "127.0.0.1" || host == "::1")));
  };
  if (same(where.address().to_string(), std::to_string(where.port()))) return true;
  const char* via = std::getenv(shim::kViaProxyVariable);
  if (via != nullptr && *via != '\0') {
    const std::optional<core::UrlParts> above = core::split_url("http://" + std::string(via));
    if (above && same(above->host, above->port)) return true;
  }
  return proves_curlretry_proxy(value, *url, port);
}

const char* users_own_proxy_variable(const boost::asio::ip::tcp::endpoint& where) {
  bool any_set = false;
  for (const char* name : kProxyVariables) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    if (!names_curlretry_proxy(value, where)) return name;
    any_set = true;
  }
  if (any_set) return nullptr;  // HTTPS_PROXY (or another) comes before ALL_PROXY for every program
  for (const char* name : kAllProxyVariables) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return names_curlretry_proxy(value, where) ? nullptr : name;
  }
  return nullptr;
}

}  // namespace curlretry::proxy
