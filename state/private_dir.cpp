#include "state/private_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace curlretry::state {
namespace {

std::string subject(const std::string& what, const std::string& path) {
  return what.empty() ? path : what + " " + path;
}

bool is_own_directory(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid();
}

// The variable's value without trailing slashes when it is an absolute path to a directory of
// this user's, else empty.
std::string own_directory_in(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* value = getenv ? getenv(name) : nullptr;
  if (value == nullptr || value[0] != '/' || !is_own_directory(value)) return {};
  std::string path = value;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// This machine's name as a file name may carry it: letters, digits, '-' and '.', at most 64.
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  std::string out;
  for (const char* c = name; *c != '\0' && out.size() < 64; ++c) {
    const bool safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                      (*c == '.' && !out.empty());
    out += safe ? *c : '_';
  }
  return out;
}

// mkdir of every missing component; an existing one is left for the final check (only the last
// component must be private; parents are the user's home or a system directory).
std::string make_parents(const std::string& path) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string part = path.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      return "cannot create " + part + ": " + std::strerror(errno);
    }
  }
  return {};
}

}  // namespace

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string default_dir(const std::function<const char*(const char*)>& getenv) {
  const std::string uid = std::to_string(::getuid());
  // Only the user's own runtime directory: root under `sudo -E` must not leave a root-owned
  // directory in the user's, which would lock the user's own processes out of it.
  if (const std::string runtime = own_directory_in(getenv, "XDG_RUNTIME_DIR"); !runtime.empty()) {
    return runtime + "/curlretry";
  }
  struct stat st {};
  std::string shared = (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp");
  shared += "/curlretry-" + uid;
  // That name is in a directory anyone can write to: another user may have taken it first, and
  // would then deny this user the fleet and the proxy for as long as it stands. The home
  // directory is one nobody else can write to; the host name keeps a home shared between
  // machines (NFS) from sharing one machine's table, lock and proxy records.
  if (::lstat(shared.c_str(), &st) == 0 && st.st_uid != ::getuid()) {
    if (const std::string home = own_directory_in(getenv, "HOME"); !home.empty()) {
      return home + "/.curlretry-" + host_name();
    }
  }
  return shared;
}

std::string user_name(uid_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  char buffer[1024];
  if (::getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr && found->pw_name) {
    return found->pw_name;
  }
  return {};
}

std::string describe_uid(uid_t uid) {
  const std::string name = user_name(uid);
  return "uid " + std::to_string(uid) + (name.empty() ? "" : " (" + name + ")");
}

std::string refusal(const std::string& what, const std::string& path, const struct stat& st, bool directory) {
  const std::string name = subject(what, path);
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    return name + " is not a " + (directory ? "directory" : "regular file") + "; refusing it: remove it";
  }
  if (st.st_uid != ::getuid()) {
    // Made by someone else, to read or redirect what we write there.
    const std::string owner = user_name(st.st_uid);
    return name + " belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " + std::to_string(::getuid()) +
           "); refusing it: have " + (owner.empty() ? std::string("its owner") : "user " + owner) +
           " (or root) remove it";
  }
  if ((st.st_mode & 077) != 0) {
    const char* want = directory ? "0700" : "0600";
    return name + " is open to others (mode " + mode_text(st.st_mode) + ", must be " + want +
           "); refusing it: fix with chmod " + (directory ? "700 " : "600 ") + path;
  }
  return {};
}

Dir::Dir(Dir&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), error_(std::move(other.error_)) {}

Dir& Dir::operator=(Dir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    error_ = std::move(other.error_);
  }
  return *this;
}

Dir::~Dir() {
  if (fd_ >= 0) ::close(fd_);
}

Dir open_private_dir(const std::string& path, const std::string& what, bool create_parents) {
  Dir dir;
  dir.path_ = path;
  const std::string name = subject(what, path);
  if (path.empty() || path[0] != '/') {
    dir.error_ = (what.empty() ? std::string("the directory") : what) + " \"" + path + "\" is not an absolute path";
    return dir;
  }
  if (create_parents) {
    if (std::string e = make_parents(path); !e.empty()) {
      dir.error_ = e;
      return dir;
    }
  }
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    dir.error_ = "cannot create " + name + ": " + std::strerror(errno);
    return dir;
  }
  // O_NOFOLLOW: a link planted where the directory should be is refused, not followed; every
  // check below is on what was opened, so nothing can be swapped in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    struct stat st {};
    if ((e == ELOOP || e == ENOTDIR) && ::lstat(path.c_str(), &st) == 0) {
      dir.error_ =
          name + " is not a directory (" + (S_ISLNK(st.st_mode) ? "a symlink" : "a file") + "); refusing it: remove it";
    } else {
      dir.error_ = "cannot open " + name + ": " + std::strerror(e);
    }
    return dir;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    dir.error_ = "cannot read " + name + ": " + std::strerror(errno);
    ::close(fd);
    return dir;
  }
  if (std::string e = refusal(what, path, st, true); !e.empty()) {
    dir.error_ = e;
    ::close(fd);
    return dir;
  }
  dir.fd_ = fd;
  return dir;
}

int Dir::open_file(const std::string& name, int flags, std::string& error) const {
  const std::string path = path_ + "/" + name;
  if (fd_ < 0) {
    error = error_;
    return -1;
  }
  const int fd = ::openat(fd_, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = errno == ELOOP ? path + " is a symlink; refusing it: remove it"
                           : "cannot open " + path + ": " + std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (std::string e = refusal("", path, st, false); !e.empty()) {
    error = e;
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace curlretry::state
