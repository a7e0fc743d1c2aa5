// Permissions that make the loader ignore LD_PRELOAD: set-user-ID, set-group-ID, file capabilities,
// and whether a nosuid mount takes their effect away.
#pragma once

#include <string>
#include <vector>

namespace curlretry::cli::doctor {

struct Privilege {
  std::vector<std::string> phrases;  // "is set-user-ID root", "has file capabilities cap_net_raw=ep"
  std::string text() const {
    std::string out;
    for (std::size_t i = 0; i < phrases.size(); ++i) out += (i == 0 ? "" : " and ") + phrases[i];
    return out;
  }
  bool nosuid_mount = false;
};

// The privilege the file at `path` gives a run of it.
Privilege privilege_of(const std::string& path);

}  // namespace curlretry::cli::doctor
