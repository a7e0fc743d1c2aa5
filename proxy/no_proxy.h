// The NO_PROXY a launched COMMAND gets. A program skips the proxy for every host its NO_PROXY
// covers, so an entry covering a provider host the config intercepts (`*`, `.anthropic.com`,
// `api.openai.com`) would send that host's requests around curlretry's proxy: a launch that
// retries nothing, without a word. Entries are read as curl, Python and Node read them: a host and
// every name below it (`example.com` and `.example.com` alike), `*` for every host, an optional
// `:port`, separated by commas or blanks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace curlretry::proxy {

struct CommandNoProxy {
  std::string value;                  // for NO_PROXY and no_proxy, entries joined by commas
  std::vector<std::string> covering;  // the user's entries that cover an intercepted host
};

// Whether NO_PROXY's `entry` covers a host that intercept glob `glob` matches.
bool entry_covers(std::string_view entry, std::string_view glob);

// From the user's NO_PROXY `current` (nullptr when unset): loopback (localhost, 127.0.0.1, ::1)
// added so the routes' URLs and local servers stay direct, except a loopback host the config
// intercepts and lets the proxy reach (proxy.forward.allow_loopback); each entry covering an
// intercepted host the proxy may reach in `covering`, and dropped from `value` when `drop_covering`.
// (The launcher keeps them when the user's own proxy is in play: there NO_PROXY may be the only
// way the user's network reaches that host.)
CommandNoProxy command_no_proxy(const char* current, const config::ProxySettings& proxy, bool drop_covering);

}  // namespace curlretry::proxy
