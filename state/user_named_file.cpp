#include "state/user_named_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace curlretry::state {
namespace {

int refuse(Planted& planted, Planted::Kind kind, uid_t owner, int dir, int fd = -1) {
  planted = Planted{kind, owner};
  if (fd >= 0) ::close(fd);
  ::close(dir);
  errno = EACCES;
  return -1;
}

}  // namespace

int open_user_named(const char* path, int flags, mode_t mode, Planted& planted) noexcept {
  planted = Planted{};
  const char* slash = std::strrchr(path, '/');
  const char* base = slash != nullptr ? slash + 1 : path;
  // A name that is a directory's own ("x/", ".", ".."): open says what it is.
  if (*base == '\0' || std::strcmp(base, ".") == 0 || std::strcmp(base, "..") == 0) return ::open(path, flags, mode);
  char dir_path[PATH_MAX];
  if (slash == nullptr) {
    std::strcpy(dir_path, ".");
  } else if (slash == path) {
    std::strcpy(dir_path, "/");
  } else {
    const auto length = static_cast<std::size_t>(slash - path);
    if (length >= sizeof dir_path) {
      errno = ENAMETOOLONG;
      return -1;
    }
    std::memcpy(dir_path, path, length);
    dir_path[length] = '\0';
  }
  const int dir = ::open(dir_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  struct stat dir_stat {};
  if (::fstat(dir, &dir_stat) != 0) {
    const int error = errno;
    ::close(dir);
    errno = error;
    return -1;
  }
  const bool shared = (dir_stat.st_mode & S_IWOTH) != 0;
  const uid_t me = ::geteuid();
  auto trusted = [&](uid_t owner) { return owner == me || owner == dir_stat.st_uid; };
  int how = flags;
  if (shared) {
    struct stat entry {};
    if (::fstatat(dir, base, &entry, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(entry.st_mode)) {
      if (!trusted(entry.st_uid) || (dir_stat.st_mode & S_ISVTX) == 0)
        return refuse(planted, Planted::Kind::link, entry.st_uid, dir);
    } else {
      how |= O_NOFOLLOW;  // a link planted after the look is not followed (ELOOP)
    }
  }
  const int fd = ::openat(dir, base, how, mode);
  if (fd < 0) {
    const int error = errno;
    ::close(dir);
    errno = error;
    return -1;
  }
  if (shared && (how & O_NOFOLLOW) != 0) {
    // Checked on what was opened, so that a file planted between the look and the open is seen.
    struct stat opened {};
    if (::fstat(fd, &opened) != 0 || !trusted(opened.st_uid))
      return refuse(planted, Planted::Kind::file, opened.st_uid, dir, fd);
  }
  ::close(dir);
  return fd;
}

std::string describe(const Planted& planted) {
  const std::string owner = "uid " + std::to_string(planted.owner);
  switch (planted.kind) {
    case Planted::Kind::link:
      return "a symbolic link owned by " + owner +
             " in a directory anyone can write to: not followed, another user may have put it there";
    case Planted::Kind::file:
      return "a file owned by " + owner +
             " in a directory anyone can write to: not written to, another user may have put it there";
    case Planted::Kind::none: break;
  }
  return {};
}

}  // namespace curlretry::state
