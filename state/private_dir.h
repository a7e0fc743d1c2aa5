// The user's private curlretry directory, and the one rule every piece of private state follows
// (the fleet table, the proxy's log, lock and secret, the local CA's directory): a directory of
// this user's, mode 0700, opened without following a link; files in it opened relative to that
// directory without following a link, mode 0600, owned by this user. Anything else is refused
// with a sentence that names the fix: another local user may have made it to catch our writes.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <string>

namespace curlretry::state {

// $XDG_RUNTIME_DIR/curlretry when XDG_RUNTIME_DIR is an absolute path to a directory of this
// user's, else /dev/shm/curlretry-$UID (a tmpfs, like the runtime directory), or
// /tmp/curlretry-$UID when there is no /dev/shm; when another user holds that name,
// $HOME/.curlretry-HOSTNAME (HOME a directory of this user's), else the held name (refused).
std::string default_dir(const std::function<const char*(const char*)>& getenv);

// An open private directory; `fd` is -1 and `error` says why when it could not be had.
class Dir {
 public:
  Dir() = default;
  Dir(Dir&& other) noexcept;
  Dir& operator=(Dir&& other) noexcept;
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  ~Dir();

  explicit operator bool() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

  // Opens (creating with O_CREAT) `name` inside with O_NOFOLLOW|O_CLOEXEC|`flags`, mode 0600,
  // then checks it is a regular file of this user's closed to others. -1 and `error` otherwise.
  int open_file(const std::string& name, int flags, std::string& error) const;

 private:
  friend Dir open_private_dir(const std::string& path, const std::string& what, bool create_parents);
  int fd_ = -1;
  std::string path_;
  std::string error_;
};

// Creates `path` (mode 0700; its parents too with `create_parents`, each 0700) when missing,
// opens it with O_NOFOLLOW|O_DIRECTORY|O_CLOEXEC and checks through the open descriptor that it
// is this user's and closed to group and others. `what` starts the error sentences ("the fleet
// directory"); may be empty.
Dir open_private_dir(const std::string& path, const std::string& what, bool create_parents = false);

// The check itself, on what fstat said of `path`: empty when private, else the refusal.
std::string refusal(const std::string& what, const std::string& path, const struct stat& st, bool directory);

// A file mode's permission bits as the error sentences show them ("0777"): this one and the
// config file's (config/file_trust.h).
std::string mode_text(mode_t mode);

// The user name of `uid`, empty when unknown.
std::string user_name(uid_t uid);

// "uid 1001 (alice)", or "uid 1001" when the name is unknown.
std::string describe_uid(uid_t uid);

}  // namespace curlretry::state
