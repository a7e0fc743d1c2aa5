// A file the user names for our own lines (the log file, the attempt log) rather than one of our
// private state: it may sit in a directory anyone can write to (/tmp, /dev/shm, a 0777 share),
// where another local user can plant, before we open it, a symbolic link to a file of ours (our
// lines then land in it: a shell startup file, a crontab) or a file of their own (our lines,
// which name hosts and paths, then go to them). The kernel's fs.protected_symlinks and
// fs.protected_regular refuse both when they are on; many machines and containers have them off.
// This applies the same two rules itself, in that one kind of directory, and nowhere else: a
// user's own directories, /dev/stderr and the like open as they always did.
#pragma once

#include <sys/types.h>

#include <string>

namespace curlretry::state {

// What was refused: nothing, a symbolic link, or a file, and whose it was.
struct Planted {
  enum class Kind { none, link, file };
  Kind kind = Kind::none;
  uid_t owner = 0;
  explicit operator bool() const { return kind != Kind::none; }
};

// open(path, flags, mode), except in a directory others can write to:
// - a symbolic link is followed only when the directory is sticky and the link is this user's or
//   the directory owner's (nobody else can replace it there), as fs.protected_symlinks does;
// - a file that exists must be this user's or the directory owner's, as fs.protected_regular
//   does, and a name not there yet is opened without following a link planted meanwhile.
// A refusal returns -1 with errno EACCES and says what in `planted`; any other failure is
// open's own (errno), with `planted` empty. No allocation: the preload library calls it.
int open_user_named(const char* path, int flags, mode_t mode, Planted& planted) noexcept;

// "a symbolic link owned by uid 1001 in a directory anyone can write to: not followed, another
// user may have put it there" (no name lookup: the preload library runs inside other programs).
std::string describe(const Planted& planted);

}  // namespace curlretry::state
