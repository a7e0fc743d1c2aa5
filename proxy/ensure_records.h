// The files in the user's private directory (state/private_dir.h) that say where the user's
// proxies for one address listen: STEM.port when the address's own moved off a held port, and
// STEM.cfg-ID.port for each one started beside it for another config (proxy/ensure.h). Each is
// the proxy's own --port-file, written by mkstemp and rename inside the 0700 directory; whatever
// a record names is still proven (proxy/ensure.h's probe) before anyone uses it.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <optional>
#include <string>
#include <vector>

#include "state/private_dir.h"

namespace curlretry::proxy {

// The files of the proxy of one address: STEM.lock, STEM.log, STEM.port ("proxy-127.0.0.1-7878").
std::string stem_of(const boost::asio::ip::tcp::endpoint& where);

// The stem of the proxy beside `where` for the config `config_id` (proxy/ensure_digest.h):
// STEM.cfg-ID, for its .log and .port; the lock stays the address's, so launches for one address
// still decide one at a time.
std::string beside_stem(const boost::asio::ip::tcp::endpoint& where, const std::string& config_id);

// The stems of the proxies recorded beside `where` (STEM.cfg-ID.port files), in no order.
std::vector<std::string> beside_stems(const state::Dir& dir, const boost::asio::ip::tcp::endpoint& where);

// The port recorded in STEM.port; nullopt when there is no record (or not one a proxy wrote: a
// number 1-65535 and a newline).
std::optional<unsigned short> recorded_port(const state::Dir& dir, const std::string& stem);

}  // namespace curlretry::proxy
