#include "proxy/ca_files.h"

#include <fcntl.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace curlretry::proxy {

std::string write_file(const std::string& path, const std::string& data, mode_t mode) {
  const std::string temp = path + ".tmp" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return "cannot create " + temp + ": " + std::strerror(errno);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return "cannot write " + temp + ": " + why;
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, mode);  // whatever the umask
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    return "cannot write " + path + ": " + why;
  }
  return {};
}

std::string read_file(const std::string& path, std::size_t limit, bool owned) {
  // Non-blocking: opening a FIFO must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (!owned || st.st_uid == ::getuid() || st.st_uid == 0)) {
    char buffer[64 * 1024];
    while (out.size() < limit) {
      const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, limit - out.size()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::string system_store() {
  const char* candidates[] = {X509_get_default_cert_file(), "/etc/ssl/certs/ca-certificates.crt",
                              "/etc/pki/tls/certs/ca-bundle.crt"};
  for (const char* c : candidates) {
    if (c != nullptr && ::access(c, R_OK) == 0) return c;
  }
  return {};
}

}  // namespace curlretry::proxy
