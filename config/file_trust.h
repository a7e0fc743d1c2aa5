// Whether a config file is one only its reader (or root) could have written. A config can name a
// command curlretry runs (auth.command) and the origins requests go to, with their credentials
// (proxy.routes, fallback.url): a file another user can change is their code and their upstream
// in the reader's processes. So, as ssh does with its own config, such a file is refused.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

namespace curlretry::config {

// Empty when `file` (fstat of the opened config at `path`) is trusted by `reader` (the effective
// uid): it is the reader's or root's, no other user can write to it, and its directory does not
// let another user replace it (writable by anyone without the sticky bit). Otherwise the reason,
// with what to do. A group-writable file is accepted: Debian's user-private groups make that the
// default mode of a user's files, and a group is something its owner chose.
std::string untrusted_config(const struct stat& file, const std::string& path, uid_t reader);

}  // namespace curlretry::config
