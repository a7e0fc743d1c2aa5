// Reads an ELF file's DT_NEEDED list without loading it, to tell whether a library that a host
// is about to dlopen() links libcurl.
#pragma once

namespace curlretry::shim {

// True when `path` is a readable 64-bit ELF object with a DT_NEEDED entry "libcurl*". Bounded
// reads; any malformation gives false.
bool elf_needs_libcurl(const char* path);

}  // namespace curlretry::shim
