// The files of the local CA's directory as the CA and the trust handed to commands write and read
// them: whole files, replaced atomically, and the system's certificate store.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace curlretry::proxy {

// Written to a temporary file beside `path`, then renamed: a reader never sees half a file. The
// error text, empty on success.
std::string write_file(const std::string& path, const std::string& data, mode_t mode);

// The file's first `limit` bytes (all of it by default), "" when it cannot be read or is not a
// regular file: a path from the environment may name a FIFO or /dev/zero. With `owned`, "" too
// for a file that neither this user nor root owns (checked on the file opened, not its name).
std::string read_file(const std::string& path, std::size_t limit = static_cast<std::size_t>(-1), bool owned = false);

// The system's store of trusted certificates (OpenSSL's default file, else Debian's or Red Hat's
// bundle), "" when none is readable.
std::string system_store();

}  // namespace curlretry::proxy
