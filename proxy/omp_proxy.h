// oh-my-pi (`omp`, Pi's fork, run on Bun) ignores HTTPS_PROXY for its provider requests: they go
// out directly (Anthropic's through its own node:https "cowork" transport) unless PI_PROXY, or
// PI_PROXY_<PROVIDER> for one provider, names a proxy. Handed only HTTPS_PROXY, `curlretry -- omp`
// retried none of them, without a word; interception hands it curlretry's proxy there too.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <string_view>

namespace curlretry::proxy {

// The variable omp reads its provider proxy from (PI_PROXY_<PROVIDER> before it, for one provider).
inline constexpr const char* kOmpProxyVariable = "PI_PROXY";

// Sets PI_PROXY to `origin`, curlretry's proxy at `where`, unless one of the user's PI_PROXY* names
// a proxy of their own: neither curlretry's nor `upstream`, the proxy curlretry's goes through (the
// user's HTTPS_PROXY, or proxy.upstream_proxy; "" for none), whose traffic still leaves by it. Such
// a variable is kept (it may be the only way out, for a region its provider allows) and, when
// COMMAND is omp, the returned line says that its requests there are not retried and how to have
// them retried; "" otherwise.
std::string hand_omp_proxy(std::string_view command, const std::string& origin,
                           const boost::asio::ip::tcp::endpoint& where, std::string_view upstream);

}  // namespace curlretry::proxy
