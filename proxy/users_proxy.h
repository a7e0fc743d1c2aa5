// The proxy variables a launched COMMAND reads (HTTPS_PROXY and the rest), and which of them name
// a proxy of the user's own (a company's, the only way out of a network) rather than curlretry's:
// the launcher hands COMMAND curlretry's proxy in their place and, for a proxy of the user's, has
// curlretry's proxy reach the providers through it (proxy.upstream_proxy).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string_view>

namespace curlretry::proxy {

// The variables a command reads its proxy from, in the order they are looked at (HTTPS_PROXY
// first); interception sets each of them to curlretry's proxy.
inline constexpr const char* kProxyVariables[] = {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"};

// curl's proxy for every scheme whose own variable is unset (all_proxy first, as curl looks). A
// command that honours it (curl, Codex, Claude Code; not Gemini CLI) reaches the providers through it when none of
// kProxyVariables is set; interception hands such a command HTTPS_PROXY, which comes first, so
// curlretry's proxy must go where ALL_PROXY went.
inline constexpr const char* kAllProxyVariables[] = {"all_proxy", "ALL_PROXY"};

// The first of them that names a proxy of the user's own rather than curlretry's, whose proxy is
// at `where` for this launch, else (none of them set) the first of kAllProxyVariables that does:
// nullptr when none does. curlretry's own is that address (a shell
// that exports HTTPS_PROXY=http://127.0.0.1:7878 for every program), the one a launch above this
// one set (CURLRETRY_VIA_PROXY), or a loopback one that proves it is this user's curlretry proxy
// (one started by hand on another port: going through it would put two retry layers on each
// request). The value is never shown: it may carry a password.
const char* users_own_proxy_variable(const boost::asio::ip::tcp::endpoint& where);

// Whether the proxy URL `value` names curlretry's own proxy: `where` (a shell that exports
// HTTPS_PROXY=http://127.0.0.1:7878 for every program), the one a launch above this one set
// (CURLRETRY_VIA_PROXY), or another that proves it is. "localhost" names the loopback address.
bool names_curlretry_proxy(std::string_view value, const boost::asio::ip::tcp::endpoint& where);

}  // namespace curlretry::proxy
