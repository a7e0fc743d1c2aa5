// proxy.upstream_proxy / CURLRETRY_UPSTREAM_PROXY: a proxy of the user's own (a company's, the
// only way out of a network) that curlretry's proxy reaches every upstream through. What it may be
// is decided here once, for the file, the variable, and the launcher that fills the variable from
// the HTTPS_PROXY a command was given (proxy/main.cpp).
#pragma once

#include <string>
#include <string_view>

namespace curlretry::config {

inline constexpr const char* kUpstreamProxyVariable = "CURLRETRY_UPSTREAM_PROXY";
// proxy.upstream_ca_file's variable: the launcher hands curlretry's proxy the certificates the
// command trusted (a TLS-inspecting proxy's CA, proxy/command_trust.h) through it.
inline constexpr const char* kUpstreamCaFileVariable = "CURLRETRY_UPSTREAM_CA_FILE";

// "" when `url` is a proxy curlretry's proxy can go through: http://[user[:password]@]host[:port][/]
// (no scheme means http://, as curl reads it; no port means 1080, libcurl's default). Otherwise
// what is wrong with it, never quoting it: it may carry a password. An https:// or socks proxy is
// refused: the proxy's tunnels and WebSockets speak plain HTTP CONNECT to it.
std::string upstream_proxy_problem(std::string_view url);

}  // namespace curlretry::config
