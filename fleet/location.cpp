#include "fleet/location.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace curlretry::fleet {

std::string store_dir(const std::string& configured, const std::function<const char*(const char*)>& getenv) {
  if (!configured.empty()) return configured;
  const char* runtime = getenv ? getenv("XDG_RUNTIME_DIR") : nullptr;
  // Only the user's own runtime directory: root under `sudo -E` must not leave a root-owned
  // directory in the user's, which would lock the user's own processes out of the store.
  struct stat st {};
  if (runtime != nullptr && runtime[0] == '/' && ::stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == ::getuid()) {
    return std::string(runtime) + "/curlretry";
  }
  return "/dev/shm/curlretry-" + std::to_string(::getuid());
}

std::string ensure_private_dir(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return "the fleet directory \"" + dir + "\" is not an absolute path";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return "cannot create the fleet directory " + dir + ": " + std::strerror(errno);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return "cannot read the fleet directory " + dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "the fleet directory " + dir + " is not a directory";
  if (st.st_uid != ::getuid()) {
    return "the fleet directory " + dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user";
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "the fleet directory " + dir + " has mode " + mode + "; it must be closed to others (0700)";
  }
  return {};
}

}  // namespace curlretry::fleet
