// One retry layer: a command run through curlretry's proxy (`curlretry --proxy`, or the
// launcher's automatic path) keeps the preload for its libcurl children, and their requests that
// the proxy itself answers are already retried there. The launcher names the proxy to them
// (CURLRETRY_VIA_PROXY=ADDR:PORT, CURLRETRY_VIA_PROXY_INTERCEPT=glob,...); a transfer whose
// connection went to that address, for a request the proxy retries (any http:// one: a route or a
// forward; an https:// one only for an intercepted host, the others are blind tunnels), gets one
// attempt here: the proxy's answer, give-up included, is handed over as it is, never retried again.
#pragma once

#include <string_view>

#include "shim/url_parts.h"

namespace curlretry::shim {

inline constexpr const char* kViaProxyVariable = "CURLRETRY_VIA_PROXY";
inline constexpr const char* kViaProxyInterceptVariable = "CURLRETRY_VIA_PROXY_INTERCEPT";

// Whether the proxy `via` ("ADDR:PORT") with `intercept` ("glob,glob") retried this request: it
// connected to `primary_ip`:`primary_port` for `url`.
bool retried_by_proxy(std::string_view via, std::string_view intercept, std::string_view primary_ip, long primary_port,
                      const UrlParts& url);

// Whether this process was given a proxy to leave retries to (its variables are read once).
bool proxy_named();

// retried_by_proxy() with the variables of this process and the transfer's connection.
bool retried_by_own_proxy(std::string_view primary_ip, long primary_port, const UrlParts& url);

}  // namespace curlretry::shim
