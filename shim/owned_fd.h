// "This descriptor still names our file": the one check behind the log sink, the log's fd 2 and
// the attempt log. A host may close any descriptor and open something of its own at the same
// number; a line of ours must never land in its socket or file, so before each write the
// descriptor's (st_dev, st_ino) is compared with what it was when we opened or first saw it.
// Two system calls' worth of doubt remain, and are accepted: a host that reopens the *same*
// file at the same number passes, and a close between the check and the write is not seen.
#pragma once

#include <sys/types.h>

namespace curlretry::shim {

// Remembers what `fd` names; false (dev, ino untouched) when it names nothing (fstat fails).
bool file_identity(int fd, dev_t& dev, ino_t& ino) noexcept;

// Whether `fd` still names the file whose identity was remembered.
bool names_file(int fd, dev_t dev, ino_t ino) noexcept;

}  // namespace curlretry::shim
