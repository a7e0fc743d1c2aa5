#include "shim/owned_fd.h"

#include <sys/stat.h>

namespace curlretry::shim {

bool file_identity(int fd, dev_t& dev, ino_t& ino) noexcept {
  struct stat st{};
  if (fd < 0 || ::fstat(fd, &st) != 0) return false;
  dev = st.st_dev;
  ino = st.st_ino;
  return true;
}

bool names_file(int fd, dev_t dev, ino_t ino) noexcept {
  struct stat st{};
  return fd >= 0 && ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

}  // namespace curlretry::shim
