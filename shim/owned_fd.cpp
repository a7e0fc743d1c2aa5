#include "shim/owned_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace curlretry::shim {

int open_owned(const char* path, dev_t& dev, ino_t& ino, int& error, state::Planted& planted) noexcept {
  constexpr int kFlags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  int fd = state::open_user_named(path, kFlags, 0600, planted);
  if (fd >= 0 && fd <= STDERR_FILENO) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    ::close(fd);
    fd = moved;
  }
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    error = fd >= 0 && S_ISDIR(st.st_mode) ? EISDIR : errno;
    if (fd >= 0) ::close(fd);
    return -1;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  dev = st.st_dev;
  ino = st.st_ino;
  return fd;
}

std::string failure_text(int error, const state::Planted& planted) {
  return planted ? state::describe(planted) : std::strerror(error);
}

bool file_identity(int fd, dev_t& dev, ino_t& ino) noexcept {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) return false;
  dev = st.st_dev;
  ino = st.st_ino;
  return true;
}

bool names_file(int fd, dev_t dev, ino_t ino) noexcept {
  struct stat st {};
  return fd >= 0 && ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

}  // namespace curlretry::shim
