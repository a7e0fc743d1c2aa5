// "This descriptor still names our file": the one open and the one check behind the log sink,
// the log's fd 2 and the attempt log. A host may close any descriptor and open something of its own at the same
// number; a line of ours must never land in its socket or file, so before each write the
// descriptor's (st_dev, st_ino) is compared with what it was when we opened or first saw it.
// Two system calls' worth of doubt remain, and are accepted: a host that reopens the *same*
// file at the same number passes, and a close between the check and the write is not seen.
#pragma once

#include <sys/types.h>

#include <string>

#include "state/user_named_file.h"

namespace curlretry::shim {

// Opens `path` for our own appended lines (the log file, the attempt log), 0600 when created;
// the descriptor (close-on-exec) and what it names, or -1 with `error` (an errno). The stricter
// of the two opens the log and the attempt log had, for both, because each guard protects the
// host: never one of 0-2 (a host that later opens its stdout would get our file, and our lines
// its output); O_NONBLOCK for the open only (a FIFO without a reader is ENXIO, never a host hung
// in its first curl call), O_NOCTTY (a terminal named as the file does not become the host's
// controlling terminal); a directory is refused (EISDIR); in a directory anyone can write to, a
// link or a file another user planted is refused (`planted` says which: state/user_named_file.h).
int open_owned(const char* path, dev_t& dev, ino_t& ino, int& error, state::Planted& planted) noexcept;

// Why open_owned failed, for the one line that says so: what was planted, else strerror(error).
std::string failure_text(int error, const state::Planted& planted);

// Remembers what `fd` names; false (dev, ino untouched) when it names nothing (fstat fails).
bool file_identity(int fd, dev_t& dev, ino_t& ino) noexcept;

// Whether `fd` still names the file whose identity was remembered.
bool names_file(int fd, dev_t dev, ino_t ino) noexcept;

}  // namespace curlretry::shim
