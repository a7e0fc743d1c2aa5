#include "config/file_search.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "config/file_trust.h"
#include "config/yaml_tree.h"

namespace curlretry::config {

std::vector<Candidate> config_candidates(const Environment& env, const EnvOverrides& overrides,
                                         const std::optional<std::string>& explicit_path) {
  // setuid/setgid: the invoking user controls env and $HOME, so only root's file counts.
  if (env.secure) return {{env.system_file, ""}};
  if (explicit_path) return {{*explicit_path, "--config"}};
  if (overrides.config_path) return {{*overrides.config_path, "CURLRETRY_CONFIG"}};

  std::vector<Candidate> out;
  const char* xdg = env.get ? env.get("XDG_CONFIG_HOME") : nullptr;
  // The XDG spec says a relative value is invalid and must be ignored.
  if (xdg != nullptr && xdg[0] == '/') out.push_back({std::string(xdg) + "/curlretry/config.yaml", ""});
  std::string home = env.home;
  if (home.empty() && env.get) {
    if (const char* h = env.get("HOME")) home = h;
  }
  if (!home.empty() && home[0] == '/') out.push_back({home + "/.config/curlretry/config.yaml", ""});
  out.push_back({env.system_file, ""});
  return out;
}

namespace {

// Thread-safe, unlike strerror: the shim may load config on any host thread.
std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

}  // namespace

ReadStatus read_config_file(const std::string& path, std::string& content, std::string& error) {
  content.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    error = errno_text(e);
    return (e == ENOENT || e == ENOTDIR) ? ReadStatus::missing : ReadStatus::failed;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = errno_text(errno);
    ::close(fd);
    return ReadStatus::failed;
  }
  if (!S_ISREG(st.st_mode)) {
    // A FIFO or device could block the host process forever; a directory is a mistake.
    error = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
    ::close(fd);
    return ReadStatus::failed;
  }
  if (std::string untrusted = untrusted_config(st, path, ::geteuid()); !untrusted.empty()) {
    ::close(fd);
    error = std::move(untrusted);
    return ReadStatus::failed;
  }
  if (static_cast<unsigned long long>(st.st_size) > kMaxDocumentBytes) {
    ::close(fd);
    error = "file is larger than " + std::to_string(kMaxDocumentBytes / 1024) + " KiB; refusing to read it";
    return ReadStatus::failed;
  }
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno_text(errno);
      ::close(fd);
      return ReadStatus::failed;
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
    if (content.size() > kMaxDocumentBytes) {  // it grew while we read
      ::close(fd);
      error = "file is larger than " + std::to_string(kMaxDocumentBytes / 1024) + " KiB; refusing to read it";
      return ReadStatus::failed;
    }
  }
  ::close(fd);
  return ReadStatus::ok;
}

}  // namespace curlretry::config
