// libcurl in the closure of a program: which object, pulled in by which chain, of which TLS
// flavour; or a library that has libcurl compiled in.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli/loader_search.h"

namespace curlretry::cli::doctor {

// "libcurl.so.4", "libcurl-gnutls.so.4": a libcurl by its name.
bool is_libcurl_name(std::string_view name);

// libcurl in the closure: the object, and the chain of objects that pulls it in.
struct CurlLink {
  const LoadedObject* object = nullptr;
  std::string needed_by;  // "curl itself" or "libgit2.so.1.5 <- git"
  std::string flavour;
  std::string version;
};

// The libcurl the closure loads most directly (breadth first), if any.
std::optional<CurlLink> find_libcurl(const Closure& c);

// A library (not libcurl itself) of the closure that has libcurl compiled in.
const LoadedObject* find_embedded_libcurl(const Closure& c);

// "libcurl.so.4 -> /usr/lib/.../libcurl.so.4.8.0 (libcurl 8.5.0, OpenSSL), needed by curl directly"
std::string describe_link(const CurlLink& link);

}  // namespace curlretry::cli::doctor
