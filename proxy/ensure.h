// `curlretry proxy --ensure`: one proxy per user and address, shared by every session. Starts
// the proxy in the background unless a healthy one already answers there; a lock file makes two
// sessions that ask at once start one proxy, not two.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <string>
#include <vector>

namespace curlretry::proxy {

// True when GET /_curlretry/health at `where` answers 200 with "status":"ok" within `timeout_ms`.
bool healthy(const boost::asio::ip::tcp::endpoint& where, int timeout_ms);

// `args`: this program's arguments without --ensure. Returns the exit status for the caller.
int ensure_running(const boost::asio::ip::tcp::endpoint& where, const std::vector<std::string>& args);

}  // namespace curlretry::proxy
