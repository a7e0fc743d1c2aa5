// Where the machine store lives: $CURLRETRY_FLEET_DIR (through config), else
// the user's private curlretry directory (state/private_dir.h: $XDG_RUNTIME_DIR/curlretry, else
// /dev/shm/curlretry-$UID, or $HOME/.curlretry-HOSTNAME when another user holds that name).
// The directory is the user's own (created 0700); one owned by someone else, or open to others, is refused.
#pragma once

#include <functional>
#include <string>

namespace curlretry::fleet {

// The directory to use: `configured` when not empty, else the defaults above.
std::string store_dir(const std::string& configured, const std::function<const char*(const char*)>& getenv);

// Creates `dir` (one level, mode 0700) when missing; checks that it is a directory owned by this
// user and closed to others. Empty string on success, else a sentence saying what is wrong.
std::string ensure_private_dir(const std::string& dir);

}  // namespace curlretry::fleet
