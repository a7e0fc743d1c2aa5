// What doctor needs to know of one ELF file: word size, machine, loader, what it needs (DT_NEEDED,
// DT_SONAME, DT_RPATH, DT_RUNPATH), its section names, and byte signatures of Go and of a libcurl
// compiled in.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace curlretry::cli::doctor {

struct ElfInfo {
  bool is_elf = false;
  bool is64 = false;
  bool little = true;
  std::uint16_t type = 0;
  std::uint16_t machine = 0;
  std::string interpreter;  // PT_INTERP, empty for a static program
  bool dynamic = false;     // has PT_DYNAMIC
  std::vector<std::string> needed;
  std::string soname;
  std::vector<std::string> rpath, runpath;
  std::set<std::string> sections;
  bool go = false;
  std::string go_version;      // "go1.22.1" when the build info says
  std::string curl_inside;     // libcurl's code is in this file: its version, or "unknown version"
  bool names_libcurl = false;  // the text "libcurl.so" appears (a dlopen() target, or DT_NEEDED)
};

// The file at `path`, mapped and read; nullopt (and `error`) when it cannot be opened or mapped.
// A file that is not ELF gives is_elf false.
std::optional<ElfInfo> read_elf(const std::string& path, std::string& error);

// "x86-64", "AArch64", ... or "machine N".
std::string machine_name(std::uint16_t machine);

// "ELF 64-bit x86-64, dynamically linked, loader /lib64/ld-linux-x86-64.so.2", and Go when it is.
std::string describe_elf(const ElfInfo& e);

}  // namespace curlretry::cli::doctor
