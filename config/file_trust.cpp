#include "config/file_trust.h"

#include "state/private_dir.h"

namespace curlretry::config {
namespace {

using state::mode_text;

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

constexpr const char* kWhy =
    ": a config can name a command to run and the upstreams that get your credentials, so curlretry reads "
    "only one no other user can change";

}  // namespace

std::string untrusted_config(const struct stat& file, const std::string& path, uid_t reader) {
  if (file.st_uid != reader && file.st_uid != 0) {
    return "it belongs to uid " + std::to_string(file.st_uid) + ", not to you (uid " + std::to_string(reader) +
           ") nor root" + kWhy;
  }
  if ((file.st_mode & S_IWOTH) != 0) {
    return "any user can write to it (mode " + mode_text(file.st_mode) + ")" + kWhy + "; chmod o-w " + path;
  }
  const std::string dir = directory_of(path);
  struct stat d {};
  if (::stat(dir.c_str(), &d) == 0 && (d.st_mode & S_IWOTH) != 0 && (d.st_mode & S_ISVTX) == 0) {
    return "any user can replace it: its directory " + dir + " is writable by anyone without the sticky bit (mode " +
           mode_text(d.st_mode) + ")" + kWhy;
  }
  return {};
}

}  // namespace curlretry::config
