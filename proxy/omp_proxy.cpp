#include "proxy/omp_proxy.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/log_text.h"
#include "proxy/users_proxy.h"

namespace curlretry::proxy {

std::string hand_omp_proxy(std::string_view command, const std::string& origin,
                           const boost::asio::ip::tcp::endpoint& where, std::string_view upstream) {
  const std::string_view prefix = kOmpProxyVariable;
  std::vector<std::string> kept;  // the user's own proxies, by variable name
  bool general_kept = false;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos || !text.starts_with(prefix)) continue;
    const std::string_view name = text.substr(0, equals);
    const std::string_view value = text.substr(equals + 1);
    if (name.size() != prefix.size() && name[prefix.size()] != '_') continue;  // PI_PROXYX is not one
    if (value.empty() || value == upstream || names_curlretry_proxy(value, where)) continue;
    kept.emplace_back(name);
    general_kept = general_kept || name.size() == prefix.size();
  }
  if (!general_kept) ::setenv(kOmpProxyVariable, origin.c_str(), 1);
  if (kept.empty() || std::filesystem::path(command).filename() != "omp") return {};
  // The value is never shown: it may carry a password.
  const std::string& name = kept.front();
  const bool general = name.size() == prefix.size();
  return "curlretry: proxy: " + core::log_text::escape(name) + " names a proxy of yours, which omp sends " +
         (general ? std::string("its provider requests")
                  : "its requests on that provider (" + core::log_text::escape(name.substr(prefix.size() + 1)) + ")") +
         " through in place of curlretry's: none of them is retried; to have them retried, name that proxy in "
         "HTTPS_PROXY instead (curlretry's proxy then reaches the providers through it)";
}

}  // namespace curlretry::proxy
