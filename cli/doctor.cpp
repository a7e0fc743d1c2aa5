#include "cli/doctor.h"

#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "cli/json.h"

#ifndef CURLRETRY_MULTIARCH
#define CURLRETRY_MULTIARCH ""
#endif

extern char** environ;

namespace curlretry::cli {
namespace {

namespace fs = std::filesystem;

// =================================================================================================
// ELF, read by hand: the program headers (PT_INTERP, PT_DYNAMIC, PT_LOAD), the dynamic section
// (DT_NEEDED, DT_SONAME, DT_RUNPATH, DT_RPATH), section names, and a few byte signatures.

constexpr std::uint32_t kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3;
constexpr std::int64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14, kDtRpath = 15,
                       kDtRunpath = 29;

constexpr std::string_view kGoBuildInfoMagic("\xff Go buildinf:", 14);
constexpr std::string_view kCurlClientSignature = "CLIENT libcurl ";  // libcurl's own version banner
constexpr std::string_view kCurlErrorSignature = "A libcurl function was given a bad argument";

// A read-only mapping of a whole file.
class Mapping {
 public:
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  bool open(const std::string& path, std::string& error) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = std::strerror(errno);
      return false;
    }
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      error = "not a regular file";
      ::close(fd);
      return false;
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        error = std::strerror(errno);
        ::close(fd);
        size_ = 0;
        return false;
      }
      data_ = static_cast<const char*>(p);
    }
    ::close(fd);
    return true;
  }
  std::string_view bytes() const { return {data_ != nullptr ? data_ : "", size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

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
  std::string go_version;   // "go1.22.1" when the build info says
  std::string curl_inside;  // libcurl's code is in this file: its version, or "unknown version"
  bool names_libcurl = false;  // the text "libcurl.so" appears (a dlopen() target, or DT_NEEDED)
};

class ElfReader {
 public:
  explicit ElfReader(std::string_view b) : b_(b) {}

  std::uint64_t u(std::uint64_t off, int size) const {
    if (off > b_.size() || b_.size() - off < static_cast<std::uint64_t>(size)) {
      bad_ = true;
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < size; ++i) {
      const auto byte = static_cast<std::uint8_t>(b_[off + static_cast<std::uint64_t>(little_ ? i : size - 1 - i)]);
      v |= static_cast<std::uint64_t>(byte) << (8 * i);
    }
    return v;
  }
  std::uint64_t word(std::uint64_t off) const { return u(off, is64_ ? 8 : 4); }
  std::string cstring(std::uint64_t off, std::uint64_t limit = 4096) const {
    if (off >= b_.size()) {
      bad_ = true;
      return {};
    }
    const std::string_view rest = b_.substr(off, limit);
    return std::string(rest.substr(0, rest.find('\0')));
  }

  ElfInfo read() {
    ElfInfo info;
    if (b_.size() < 52 || b_.substr(0, 4) != "\x7f" "ELF") return info;
    if ((b_[4] != 1 && b_[4] != 2) || (b_[5] != 1 && b_[5] != 2)) return info;
    is64_ = b_[4] == 2;
    little_ = b_[5] == 1;
    info.is_elf = true;
    info.is64 = is64_;
    info.little = little_;
    info.type = static_cast<std::uint16_t>(u(16, 2));
    info.machine = static_cast<std::uint16_t>(u(18, 2));
    const std::uint64_t phoff = is64_ ? u(32, 8) : u(28, 4);
    const std::uint64_t shoff = is64_ ? u(40, 8) : u(32, 4);
    const std::uint64_t phentsize = u(is64_ ? 54 : 42, 2);
    const std::uint64_t phnum = u(is64_ ? 56 : 44, 2);
    const std::uint64_t shentsize = u(is64_ ? 58 : 46, 2);
    const std::uint64_t shnum = u(is64_ ? 60 : 48, 2);
    const std::uint64_t shstrndx = u(is64_ ? 62 : 50, 2);

    struct Segment {
      std::uint32_t type;
      std::uint64_t offset, vaddr, filesz;
    };
    std::vector<Segment> segments;
    for (std::uint64_t i = 0; i < phnum && i < 4096 && phentsize >= (is64_ ? 56u : 32u); ++i) {
      const std::uint64_t p = phoff + i * phentsize;
      Segment s{};
      s.type = static_cast<std::uint32_t>(u(p, 4));
      if (is64_) {
        s.offset = u(p + 8, 8);
        s.vaddr = u(p + 16, 8);
        s.filesz = u(p + 32, 8);
      } else {
        s.offset = u(p + 4, 4);
        s.vaddr = u(p + 8, 4);
        s.filesz = u(p + 16, 4);
      }
      if (bad_) break;
      segments.push_back(s);
    }
    auto file_offset = [&](std::uint64_t vaddr) -> std::optional<std::uint64_t> {
      for (const auto& s : segments) {
        if (s.type == kPtLoad && vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) return s.offset + (vaddr - s.vaddr);
      }
      return std::nullopt;
    };
    for (const auto& s : segments) {
      if (s.type == kPtInterp) info.interpreter = cstring(s.offset, s.filesz);
      if (s.type != kPtDynamic) continue;
      info.dynamic = true;
      const std::uint64_t entry = is64_ ? 16 : 8;
      std::vector<std::pair<std::int64_t, std::uint64_t>> dyn;
      std::uint64_t strtab = 0, strsz = 0;
      for (std::uint64_t off = s.offset; off + entry <= s.offset + s.filesz; off += entry) {
        const auto tag = static_cast<std::int64_t>(is64_ ? u(off, 8) : static_cast<std::uint64_t>(
                                                                            static_cast<std::int32_t>(u(off, 4))));
        const std::uint64_t val = is64_ ? u(off + 8, 8) : u(off + 4, 4);
        if (bad_ || tag == kDtNull) break;
        if (tag == kDtStrtab) strtab = val;
        if (tag == kDtStrsz) strsz = val;
        dyn.emplace_back(tag, val);
      }
      const auto table = file_offset(strtab);
      if (!table) continue;
      auto str = [&](std::uint64_t index) { return index < strsz ? cstring(*table + index) : std::string(); };
      auto split = [](const std::string& list) {
        std::vector<std::string> out;
        std::size_t start = 0;
        while (start <= list.size()) {
          const std::size_t end = std::min(list.find(':', start), list.size());
          if (end > start) out.push_back(list.substr(start, end - start));
          start = end + 1;
        }
        return out;
      };
      for (const auto& [tag, val] : dyn) {
        if (tag == kDtNeeded) info.needed.push_back(str(val));
        if (tag == kDtSoname) info.soname = str(val);
        if (tag == kDtRpath) info.rpath = split(str(val));
        if (tag == kDtRunpath) info.runpath = split(str(val));
      }
    }
    if (shoff != 0 && shnum > 0 && shnum < 65280 && shentsize >= (is64_ ? 64u : 40u) && shstrndx < shnum) {
      const std::uint64_t strsec = shoff + shstrndx * shentsize;
      const std::uint64_t names = is64_ ? u(strsec + 24, 8) : u(strsec + 16, 4);
      for (std::uint64_t i = 0; i < shnum && !bad_; ++i) {
        const std::uint64_t name = u(shoff + i * shentsize, 4);
        if (!bad_) info.sections.insert(cstring(names + name, 256));
      }
      bad_ = false;
    }
    scan_signatures(info);
    return info;
  }

 private:
  void scan_signatures(ElfInfo& info) const {
    const std::size_t go = b_.find(kGoBuildInfoMagic);
    info.go = go != std::string_view::npos || info.sections.count(".go.buildinfo") > 0 ||
              info.sections.count(".gopclntab") > 0 || info.sections.count(".note.go.buildid") > 0;
    if (go != std::string_view::npos && go + 33 < b_.size() && (static_cast<std::uint8_t>(b_[go + 15]) & 2) != 0) {
      // Go 1.18+: the version follows as a varint-prefixed string at offset 32.
      std::uint64_t len = 0;
      std::size_t at = go + 32;
      for (int shift = 0; at < b_.size() && shift < 28; shift += 7) {
        const auto byte = static_cast<std::uint8_t>(b_[at++]);
        len |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) break;
      }
      if (len > 0 && len < 64 && at + len <= b_.size()) {
        const std::string version(b_.substr(at, len));
        if (version.rfind("go", 0) == 0) info.go_version = version;
      }
    }
    if (const std::size_t at = b_.find(kCurlClientSignature); at != std::string_view::npos) {
      std::string version;
      for (std::size_t i = at + kCurlClientSignature.size(); i < b_.size() && version.size() < 24; ++i) {
        const char c = b_[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) break;
        version += c;
      }
      info.curl_inside = version.empty() ? "unknown version" : version;
    } else if (b_.find(kCurlErrorSignature) != std::string_view::npos) {
      info.curl_inside = "unknown version";
    }
    info.names_libcurl = b_.find("libcurl.so") != std::string_view::npos ||
                         b_.find("libcurl-gnutls.so") != std::string_view::npos;
  }

  std::string_view b_;
  bool is64_ = false;
  bool little_ = true;
  mutable bool bad_ = false;
};

std::optional<ElfInfo> read_elf(const std::string& path, std::string& error) {
  Mapping map;
  if (!map.open(path, error)) return std::nullopt;
  return ElfReader(map.bytes()).read();
}

std::string machine_name(std::uint16_t machine) {
  switch (machine) {
    case 3: return "i386";
    case 8: return "MIPS";
    case 20: return "PowerPC";
    case 21: return "PowerPC64";
    case 22: return "s390";
    case 40: return "ARM";
    case 62: return "x86-64";
    case 183: return "AArch64";
    case 243: return "RISC-V";
    case 258: return "LoongArch";
    default: return "machine " + std::to_string(machine);
  }
}

std::string describe_elf(const ElfInfo& e) {
  std::string out = std::string("ELF ") + (e.is64 ? "64" : "32") + "-bit " + machine_name(e.machine);
  if (!e.interpreter.empty()) {
    out += ", dynamically linked, loader " + e.interpreter;
  } else if (e.dynamic) {
    out += e.type == 3 ? ", shared object" : ", static-pie (no loader)";
  } else {
    out += ", statically linked";
  }
  if (e.go) out += ", Go" + (e.go_version.empty() ? std::string() : " (" + e.go_version + ")");
  return out;
}

// =================================================================================================
// Shared libraries: where the loader would find each DT_NEEDED, and the closure of what a
// program loads.

bool is_libcurl_name(std::string_view name) {
  return name.rfind("libcurl", 0) == 0 && name.find(".so") != std::string_view::npos;
}

std::string basename_of(const std::string& path) { return fs::path(path).filename().string(); }

std::string dirname_of(const std::string& path) {
  const auto parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::vector<std::string> split_path_list(const char* value) {
  std::vector<std::string> out;
  if (value == nullptr) return out;
  const std::string list = value;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find_first_of(":;", start), list.size());
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void read_ld_so_conf(const std::string& file, std::vector<std::string>& dirs, int depth) {
  if (depth > 4) return;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    if (line.rfind("include", 0) == 0 && line.size() > 8 && (line[7] == ' ' || line[7] == '\t')) {
      std::string pattern = line.substr(8);
      pattern.erase(0, pattern.find_first_not_of(" \t"));
      if (!pattern.empty() && pattern[0] != '/') pattern = dirname_of(file) + "/" + pattern;
      glob_t g{};
      if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (std::size_t i = 0; i < g.gl_pathc; ++i) read_ld_so_conf(g.gl_pathv[i], dirs, depth + 1);
      }
      ::globfree(&g);
    } else if (line[0] == '/') {
      dirs.push_back(line);
    }
  }
}

const std::vector<std::string>& system_library_dirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> out;
    read_ld_so_conf("/etc/ld.so.conf", out, 0);
    const std::string arch = CURLRETRY_MULTIARCH;
    if (!arch.empty()) {
      out.push_back("/lib/" + arch);
      out.push_back("/usr/lib/" + arch);
    }
    for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) out.emplace_back(d);
    return out;
  }();
  return dirs;
}

bool header_matches(const std::string& path, const ElfInfo& like) {
  char h[20];
  std::ifstream in(path, std::ios::binary);
  if (!in.read(h, sizeof h)) return false;
  if (std::memcmp(h, "\x7f" "ELF", 4) != 0) return false;
  if ((h[4] == 2) != like.is64 || (h[5] == 1) != like.little) return false;
  const auto b0 = static_cast<std::uint8_t>(h[18]), b1 = static_cast<std::uint8_t>(h[19]);
  const std::uint16_t machine = static_cast<std::uint16_t>(like.little ? (b0 | (b1 << 8)) : ((b0 << 8) | b1));
  return machine == like.machine;
}

std::string expand_origin(std::string dir, const std::string& origin) {
  for (const std::string_view token : {"${ORIGIN}", "$ORIGIN"}) {
    for (std::size_t at = dir.find(token); at != std::string::npos; at = dir.find(token, at + origin.size())) {
      dir.replace(at, token.size(), origin);
    }
  }
  return dir;
}

// Where the loader would find `name` for an object at `requester_path` described by `requester`.
std::optional<std::string> resolve_library(const std::string& name, const ElfInfo& requester,
                                           const std::string& requester_path) {
  if (name.find('/') != std::string::npos) {
    return header_matches(name, requester) ? std::optional<std::string>(name) : std::nullopt;
  }
  std::error_code ec;
  const std::string origin = dirname_of(fs::weakly_canonical(requester_path, ec).string());
  std::vector<std::string> dirs;
  if (requester.runpath.empty()) {
    for (const auto& d : requester.rpath) dirs.push_back(expand_origin(d, origin));
  }
  for (const auto& d : split_path_list(std::getenv("LD_LIBRARY_PATH"))) dirs.push_back(d);
  for (const auto& d : requester.runpath) dirs.push_back(expand_origin(d, origin));
  for (const auto& d : system_library_dirs()) dirs.push_back(d);
  for (const auto& d : dirs) {
    const std::string candidate = d + "/" + name;
    if (::access(candidate.c_str(), F_OK) == 0 && header_matches(candidate, requester)) return candidate;
  }
  return std::nullopt;
}

struct LoadedObject {
  std::string name;    // as needed ("libcurl.so.4")
  std::string path;    // resolved file
  std::string parent;  // the object that needs it (a name), empty for the program itself
  ElfInfo info;
};

// The program and everything it loads, breadth first (so the first libcurl found is the one
// needed most directly).
struct Closure {
  std::vector<LoadedObject> objects;
  std::vector<std::string> missing;
};

Closure load_closure(const std::string& path, const ElfInfo& root) {
  Closure c;
  c.objects.push_back({basename_of(path), path, "", root});
  std::set<std::string> seen;
  for (std::size_t i = 0; i < c.objects.size() && c.objects.size() < 400; ++i) {
    const LoadedObject current = c.objects[i];
    for (const auto& name : current.info.needed) {
      if (!seen.insert(name).second) continue;
      const auto found = resolve_library(name, current.info, current.path);
      if (!found) {
        c.missing.push_back(name);
        continue;
      }
      std::string error;
      auto info = read_elf(*found, error);
      if (!info || !info->is_elf) continue;
      c.objects.push_back({name, *found, current.name, std::move(*info)});
    }
  }
  return c;
}

std::string tls_flavour(const LoadedObject& libcurl) {
  for (const auto& n : libcurl.info.needed) {
    if (n.rfind("libssl.", 0) == 0) return "OpenSSL";
    if (n.rfind("libgnutls", 0) == 0) return "GnuTLS";
    if (n.rfind("libnss3", 0) == 0) return "NSS";
    if (n.rfind("libmbedtls", 0) == 0) return "mbedTLS";
    if (n.rfind("libwolfssl", 0) == 0) return "wolfSSL";
    if (n.rfind("librustls", 0) == 0) return "rustls";
    if (n.rfind("libbearssl", 0) == 0) return "BearSSL";
  }
  const std::string& name = libcurl.name;
  if (name.find("gnutls") != std::string::npos) return "GnuTLS";
  if (name.find("nss") != std::string::npos) return "NSS";
  if (name.find("openssl") != std::string::npos) return "OpenSSL";
  return "TLS backend unknown";
}

// libcurl in the closure: the object, and the chain of objects that pulls it in.
struct CurlLink {
  const LoadedObject* object = nullptr;
  std::string needed_by;  // "curl itself" or "libgit2.so.1.5 <- git"
  std::string flavour;
  std::string version;
};

std::optional<CurlLink> find_libcurl(const Closure& c) {
  for (const auto& o : c.objects) {
    if (o.parent.empty() || !is_libcurl_name(o.name)) continue;
    CurlLink link;
    link.object = &o;
    link.flavour = tls_flavour(o);
    link.version = o.info.curl_inside == "unknown version" ? "" : o.info.curl_inside;
    if (o.parent == c.objects.front().name) {
      link.needed_by = o.parent + " directly";
    } else {
      std::string chain = o.parent;
      std::string at = o.parent;
      for (int guard = 0; guard < 16; ++guard) {
        const auto it = std::find_if(c.objects.begin(), c.objects.end(), [&](const auto& x) { return x.name == at; });
        if (it == c.objects.end() || it->parent.empty()) break;
        chain += " <- " + it->parent;
        at = it->parent;
      }
      link.needed_by = chain;
    }
    return link;
  }
  return std::nullopt;
}

// A library (not libcurl itself) of the closure that has libcurl compiled in.
const LoadedObject* find_embedded_libcurl(const Closure& c) {
  for (const auto& o : c.objects) {
    if (!o.info.curl_inside.empty() && !is_libcurl_name(o.name) && !is_libcurl_name(o.info.soname)) return &o;
  }
  return nullptr;
}

std::string describe_link(const CurlLink& link) {
  std::error_code ec;
  const std::string real = fs::weakly_canonical(link.object->path, ec).string();
  std::string out = link.object->name + " -> " + (ec ? link.object->path : real) + " (";
  if (!link.version.empty()) out += "libcurl " + link.version + ", ";
  out += link.flavour + "), needed by " + link.needed_by;
  return out;
}

// =================================================================================================
// Finding the program, `#!` lines and interpreters.

bool is_executable_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// As execvp(3) would: a name with a slash is a path, anything else is looked up in PATH.
std::optional<std::string> find_program(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  const std::string list = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    const std::string dir = end > start ? list.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + command;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

struct Shebang {
  std::string interpreter;
  std::string argument;  // the kernel passes the rest of the line as one argument
};

std::optional<Shebang> read_shebang(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buf[256];
  in.read(buf, sizeof buf);
  const std::string head(buf, static_cast<std::size_t>(in.gcount()));
  if (head.size() < 3 || head[0] != '#' || head[1] != '!') return std::nullopt;
  std::string line = head.substr(2, head.find('\n') == std::string::npos ? std::string::npos : head.find('\n') - 2);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  const auto first = line.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  const auto end = line.find_first_of(" \t", first);
  Shebang s;
  s.interpreter = line.substr(first, end == std::string::npos ? std::string::npos : end - first);
  if (end != std::string::npos) {
    const auto arg = line.find_first_not_of(" \t", end);
    if (arg != std::string::npos) s.argument = line.substr(arg);
  }
  return s;
}

// `#!/usr/bin/env [-S] [VAR=x] python3 -u`: the program env will run.
std::optional<std::string> env_target(const std::string& argument) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < argument.size()) {
    const auto b = argument.find_first_not_of(" \t", start);
    if (b == std::string::npos) break;
    const auto e = argument.find_first_of(" \t", b);
    words.push_back(argument.substr(b, e == std::string::npos ? std::string::npos : e - b));
    start = e == std::string::npos ? argument.size() : e;
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "-S" || w == "-i" || w == "--" || w.rfind("--split-string", 0) == 0) continue;
    if (w.rfind("-S", 0) == 0) return env_target(w.substr(2));
    if (w == "-u" || w == "--unset" || w == "-C" || w == "--chdir") {
      ++i;
      continue;
    }
    if (w[0] == '-' || w.find('=') != std::string::npos) continue;
    return w;
  }
  return std::nullopt;
}

bool name_matches(const std::string& base, std::string_view stem) {
  if (base.rfind(stem, 0) != 0) return false;
  return std::all_of(base.begin() + static_cast<long>(stem.size()), base.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

enum class Language { none, python, php, shell };

Language language_of(const std::string& program) {
  const std::string base = basename_of(program);
  if (name_matches(base, "python")) return Language::python;
  if (name_matches(base, "php") || name_matches(base, "php-cli")) return Language::php;
  for (const char* shell : {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"}) {
    if (base == shell) return Language::shell;
  }
  return Language::none;
}

std::string read_text(const std::string& path, std::size_t limit = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

bool contains_word(const std::string& text, std::string_view word) {
  auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !is_name_char(text[at - 1]);
    const bool right = at + word.size() >= text.size() || !is_name_char(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// Runs argv (no shell) with stdin on /dev/null, stderr discarded and LD_PRELOAD removed; its
// stdout when it exits 0 within the time limit.
std::optional<std::string> run_probe(const std::vector<std::string>& argv, std::chrono::seconds limit) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 2);
    }
    ::dup2(out[1], 1);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p{out[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    char buf[4096];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (text.size() < (1 << 16)) text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// =================================================================================================
// Permissions that make the loader ignore LD_PRELOAD.

const char* capability_name(int bit) {
  static constexpr const char* kNames[] = {
      "chown",        "dac_override",   "dac_read_search", "fowner",        "fsetid",     "kill",
      "setgid",       "setuid",         "setpcap",         "linux_immutable", "net_bind_service",
      "net_broadcast", "net_admin",     "net_raw",         "ipc_lock",      "ipc_owner",  "sys_module",
      "sys_rawio",    "sys_chroot",     "sys_ptrace",      "sys_pacct",     "sys_admin",  "sys_boot",
      "sys_nice",     "sys_resource",   "sys_time",        "sys_tty_config", "mknod",     "lease",
      "audit_write",  "audit_control",  "setfcap",         "mac_override",  "mac_admin",  "syslog",
      "wake_alarm",   "block_suspend",  "audit_read",      "perfmon",       "bpf",        "checkpoint_restore"};
  return bit >= 0 && bit < static_cast<int>(std::size(kNames)) ? kNames[bit] : nullptr;
}

// "cap_net_raw=ep" style text of the file's capabilities, or empty when it has none.
std::string file_capabilities(const std::string& path) {
  unsigned char buf[64];
  const ssize_t n = ::getxattr(path.c_str(), "security.capability", buf, sizeof buf);
  if (n < 4) return {};
  auto le32 = [&](int off) -> std::uint32_t {
    if (off + 4 > n) return 0;
    return static_cast<std::uint32_t>(buf[off]) | static_cast<std::uint32_t>(buf[off + 1]) << 8 |
           static_cast<std::uint32_t>(buf[off + 2]) << 16 | static_cast<std::uint32_t>(buf[off + 3]) << 24;
  };
  const std::uint32_t magic = le32(0);
  const bool effective = (magic & 1) != 0;
  const std::uint64_t permitted = le32(4) | (static_cast<std::uint64_t>(le32(12)) << 32);
  std::string names;
  for (int bit = 0; bit < 64; ++bit) {
    if ((permitted >> bit & 1) == 0) continue;
    const char* name = capability_name(bit);
    names += (names.empty() ? "cap_" : ",cap_") + (name ? std::string(name) : std::to_string(bit));
  }
  if (names.empty()) return "file capabilities (security.capability)";
  return names + (effective ? "=ep" : "=p");
}

struct Privilege {
  std::vector<std::string> phrases;  // "is set-user-ID root", "has file capabilities cap_net_raw=ep"
  std::string text() const {
    std::string out;
    for (std::size_t i = 0; i < phrases.size(); ++i) out += (i == 0 ? "" : " and ") + phrases[i];
    return out;
  }
  bool nosuid_mount = false;
};

std::string account_name(const char* file, unsigned id) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    const auto c = b == std::string::npos ? b : line.find(':', b + 1);
    if (c == std::string::npos) continue;
    if (line.substr(b + 1, c - b - 1) == std::to_string(id)) return line.substr(0, a);
  }
  return std::to_string(id);
}

Privilege privilege_of(const std::string& path) {
  Privilege p;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return p;
  if ((st.st_mode & S_ISUID) != 0) p.phrases.push_back("is set-user-ID " + account_name("/etc/passwd", st.st_uid));
  // Without group execute permission the bit means mandatory locking, not set-group-ID.
  if ((st.st_mode & S_ISGID) != 0 && (st.st_mode & S_IXGRP) != 0) {
    p.phrases.push_back("is set-group-ID " + account_name("/etc/group", st.st_gid));
  }
  if (const auto caps = file_capabilities(path); !caps.empty()) p.phrases.push_back("has file capabilities " + caps);
  struct statvfs vfs{};
  p.nosuid_mount = !p.phrases.empty() && ::statvfs(path.c_str(), &vfs) == 0 && (vfs.f_flag & ST_NOSUID) != 0;
  return p;
}

// =================================================================================================
// The diagnosis.

// The same words the launcher uses after the fact (reach_watch.h), said ahead of time.
constexpr const char* kNothingToRetry =
    "curlretry would have nothing to retry: run it through curlretry's local proxy: curlretry --proxy -- COMMAND "
    "(https:// through HTTPS_PROXY also needs, once: curlretry proxy ca)";

constexpr const char* kProxyAdvice =
    "no LD_PRELOAD can reach it: run it through curlretry's local proxy: curlretry --proxy -- COMMAND, with a "
    "route in proxy.routes of the config (e.g. anthropic: {upstream: \"https://api.anthropic.com\", env: "
    "ANTHROPIC_BASE_URL}: COMMAND gets ANTHROPIC_BASE_URL=http://127.0.0.1:7878/anthropic)";

void detail(Diagnosis& d, const std::string& label, const std::string& text) { d.details.push_back(label + ": " + text); }

const ElfInfo& own_elf() {
  static const ElfInfo self = [] {
    std::string error;
    auto info = read_elf("/proc/self/exe", error);
    return info ? *info : ElfInfo{};
  }();
  return self;
}

struct Examined {
  std::string exec_path;  // the ELF file as it would be executed (PATH result, symlinks kept)
  std::string real_path;
  ElfInfo elf;
  std::string invocation;   // what the user asked about, as typed ("python3 agent.py")
  std::string interpreter;  // the interpreter to ask about extensions (may be a wrapper script)
  Language language = Language::none;
};

// An interpreter extension was found but its libcurl could not be: the user can still try it.
void extension_unresolved(Diagnosis& d, const Examined& x, const std::string& script, const std::string& summary) {
  d.verdict = DoctorVerdict::maybe;
  d.summary = summary;
  d.advice = "try it: curlretry -v -- " + (script.empty() ? basename_of(x.interpreter) + " SCRIPT" : x.invocation) +
             " and look for curlretry: lines on stderr";
}

// An interpreter extension links `link`: what the diagnosis records about it.
void extension_libcurl(Diagnosis& d, const CurlLink& link, const std::string& via, const std::string& how) {
  d.libcurl = link.object->name;
  d.flavour = link.flavour;
  d.via = via;
  detail(d, "libcurl", describe_link(link));
  detail(d, "how", how);
}

// Python: is pycurl importable, and which libcurl does it load?
void diagnose_python(Diagnosis& d, const Examined& x, const std::string& script) {
  const auto out = run_probe({x.interpreter, "-c",
                              "import pycurl, sys; sys.stdout.write(pycurl.__file__ + '\\n' + pycurl.version + '\\n')"},
                             std::chrono::seconds(15));
  const std::string base = basename_of(x.interpreter);
  const bool uses = script.empty() || contains_word(read_text(script), "pycurl");
  if (!out) {
    if (!script.empty() && uses) {
      d.verdict = DoctorVerdict::nothing_to_do;
      d.summary = script + " mentions pycurl, but " + base + " cannot import it, so it does not use libcurl yet";
      d.advice = "install pycurl for this interpreter (Debian: apt-get install python3-pycurl), then run doctor again";
    } else {
      d.verdict = DoctorVerdict::nothing_to_do;
      d.summary = base + " has no pycurl: its HTTP (urllib, requests, httpx, aiohttp) does not go through libcurl";
      d.advice = kNothingToRetry;
    }
    detail(d, "pycurl", "not importable by " + x.interpreter);
    return;
  }
  const auto l = lines_of(*out);
  const std::string module = l.empty() ? "" : l[0];
  const std::string version = l.size() > 1 ? l[1] : "";
  detail(d, "pycurl", module + (version.empty() ? "" : " (" + version + ")"));
  std::string error;
  std::optional<CurlLink> link;
  Closure closure;
  if (auto elf = read_elf(module, error); elf && elf->is_elf) {
    closure = load_closure(module, *elf);
    link = find_libcurl(closure);
  }
  if (!link) {
    extension_unresolved(d, x, script, "pycurl is installed but curlretry could not tell which libcurl it loads");
    return;
  }
  extension_libcurl(d, *link, "pycurl",
                    "Python loads pycurl with RTLD_LOCAL; libcurlretry.so finds that libcurl among the loaded objects");
  if (!script.empty() && !uses) {
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = script + " does not import pycurl: its HTTP does not go through libcurl (pycurl would: " +
                link->object->name + ", " + link->flavour + " flavour)";
    d.advice = "nothing for curlretry to do, unless a module it imports uses pycurl";
    return;
  }
  d.verdict = DoctorVerdict::works_through;
  const std::string loads = "loads libcurl dynamically (" + link->object->name + ", " + link->flavour + " flavour)";
  d.summary = script.empty() ? base + " has pycurl, which " + loads + ": Python programs that use pycurl are covered"
                             : script + " uses pycurl, which " + loads;
  d.advice = "curlretry -- " + (script.empty() ? base + " SCRIPT" : x.invocation) + " ...";
}

// PHP: is the curl extension loaded, and which libcurl does it link?
void diagnose_php(Diagnosis& d, const Examined& x, const std::string& script) {
  const auto out = run_probe({x.interpreter, "-r",
                              "echo ini_get('extension_dir'), \"\\n\", extension_loaded('curl') ? 'curl' : 'none', "
                              "\"\\n\";"},
                             std::chrono::seconds(15));
  const std::string base = basename_of(x.interpreter);
  const auto l = out ? lines_of(*out) : std::vector<std::string>{};
  if (l.size() < 2 || l[1] != "curl") {
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = base + " has no curl extension: its HTTP (file_get_contents, streams) does not go through libcurl";
    d.advice = "nothing for curlretry to do here (Debian: apt-get install php-curl would add curl_* functions)";
    detail(d, "php-curl", out ? "not loaded" : "could not ask " + x.interpreter);
    return;
  }
  const std::string extension = l[0] + "/curl.so";
  std::string error;
  std::optional<CurlLink> link;
  Closure closure;
  if (auto elf = read_elf(extension, error); elf && elf->is_elf) {
    closure = load_closure(extension, *elf);
    link = find_libcurl(closure);
  }
  detail(d, "php-curl", extension + (link ? "" : " (not readable: " + error + ")"));
  if (!link) {
    extension_unresolved(d, x, script, base + " has the curl extension, but curlretry could not tell which libcurl it links");
    return;
  }
  extension_libcurl(d, *link, "php-curl",
                    "PHP loads extensions with RTLD_DEEPBIND; libcurlretry.so's dlopen wrapper drops that flag for "
                    "libraries that link libcurl, so curl_exec() reaches the retry logic");
  const bool uses = script.empty() || contains_word(read_text(script), "curl_exec") ||
                    contains_word(read_text(script), "curl_multi_exec") || contains_word(read_text(script), "curl_init");
  if (!uses) {
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = script + " does not call curl_init/curl_exec: its HTTP does not go through libcurl";
    d.advice = "nothing for curlretry to do, unless code it includes uses the curl extension";
    return;
  }
  d.verdict = DoctorVerdict::works_through;
  const std::string loads = "links libcurl dynamically (" + link->object->name + ", " + link->flavour + " flavour)";
  d.summary = script.empty()
                  ? base + " has the curl extension, which " + loads + ": PHP programs that use curl_* are covered"
                  : script + " uses the curl extension, which " + loads;
  d.advice = "curlretry -- " + (script.empty() ? base + " SCRIPT" : x.invocation) + " ...";
}

// The first argument that names an existing file: the script an interpreter would run.
std::string script_argument(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-c" || a == "-m" || a == "-r") return {};
    if (a.empty() || a[0] == '-') continue;
    struct stat st{};
    return ::stat(a.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? a : std::string();
  }
  return {};
}

Diagnosis diagnose_at_depth(const std::vector<std::string>& command, int depth);

void diagnose_elf(Diagnosis& d, const Examined& x, const std::string& script, const std::string& name, int depth) {
  const ElfInfo& e = x.elf;
  detail(d, "program", x.real_path + " (" + describe_elf(e) + ")");
  const ElfInfo& self = own_elf();
  if (self.is_elf && (e.is64 != self.is64 || e.machine != self.machine)) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = name + " is " + (e.is64 ? "64" : "32") + "-bit " + machine_name(e.machine) +
                ", libcurlretry.so is " + (self.is64 ? "64" : "32") + "-bit " + machine_name(self.machine) +
                ": the loader cannot preload it";
    d.advice = "build curlretry for that architecture, or " + std::string(kProxyAdvice);
    return;
  }
  if (!e.interpreter.empty() && e.interpreter.find("ld-musl") != std::string::npos) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = name + " runs on musl (" + e.interpreter + "); libcurlretry.so is built for glibc";
    d.advice = "build curlretry against musl, or " + std::string(kProxyAdvice);
    return;
  }

  Closure closure;
  if (e.dynamic) closure = load_closure(x.real_path, e);
  const auto link = e.dynamic ? find_libcurl(closure) : std::nullopt;
  if (link) {
    d.libcurl = link->object->name;
    d.flavour = link->flavour;
    detail(d, "libcurl", describe_link(*link));
  }
  for (const auto& missing : closure.missing) detail(d, "warning", "cannot find " + missing + " where the loader looks");

  const Privilege privilege = privilege_of(x.real_path);
  if (!privilege.phrases.empty()) {
    detail(d, "mode", privilege.text() + (privilege.nosuid_mount ? ", but it sits on a nosuid mount: no effect" : ""));
    if (!privilege.nosuid_mount) {
      d.verdict = DoctorVerdict::preload_ignored;
      d.summary = name + " " + privilege.text() + ": the loader runs it in secure-execution mode and ignores LD_PRELOAD";
      detail(d, "note", "the loader honours LD_PRELOAD only for a run that gains no privilege (its owner running "
                        "it); curlretry also ignores env and user config in secure-execution processes");
      d.advice = link ? "run a copy without the privilege bits under curlretry, or " + std::string(kProxyAdvice)
                      : std::string(kProxyAdvice);
      return;
    }
  }

  if (link) {
    d.verdict = DoctorVerdict::works;
    d.summary = name + " links libcurl dynamically (" + link->object->name + ", " + link->flavour + " flavour)";
    if (e.go) {
      d.summary += "; it is a Go program, so only its cgo calls into libcurl are covered, not net/http";
    }
    d.advice = basename_of(x.real_path).rfind("git-remote-http", 0) == 0
                   ? "git runs it for http(s) remotes: curlretry -- git clone|fetch|push https://..."
                   : "curlretry -- " + x.invocation + " ...";
    return;
  }
  if (e.go) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = name + " is a Go program" + (e.go_version.empty() ? "" : " (" + e.go_version + ")") +
                ": Go's net/http does not use libcurl" + (e.interpreter.empty() ? " and the binary is static" : "");
    d.advice = kProxyAdvice;
    return;
  }
  if (!e.curl_inside.empty()) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = name + " has libcurl compiled in (" +
                (e.curl_inside == "unknown version" ? std::string("libcurl") : "libcurl " + e.curl_inside) + ", " +
                (e.interpreter.empty() ? "statically linked program" : "static copy in a dynamic program") +
                "): its curl_* calls never go through the loader";
    d.advice = kProxyAdvice;
    return;
  }
  if (const LoadedObject* embedded = find_embedded_libcurl(closure)) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = name + " loads " + embedded->name + ", which has libcurl " + embedded->info.curl_inside +
                " compiled in: its curl_* calls never go through the loader";
    d.advice = kProxyAdvice;
    return;
  }

  if (x.interpreter != x.exec_path && x.language != Language::none) {
    detail(d, "wrapper", x.interpreter + " is a wrapper script, run by " + x.exec_path);
  }
  if (x.language == Language::python) return diagnose_python(d, x, script);
  if (x.language == Language::php) return diagnose_php(d, x, script);
  if (x.language == Language::shell && !script.empty() && depth < 4) {
    if (contains_word(read_text(script), "curl")) {
      const Diagnosis inner = diagnose_at_depth({"curl"}, depth + 1);
      detail(d, "runs", "curl (" + (inner.program.empty() ? std::string("not found in PATH") : inner.program) + ")");
      for (const auto& line : inner.details) d.details.push_back("curl " + line);
      if (inner.verdict == DoctorVerdict::works) {
        d.verdict = DoctorVerdict::works_through;
        d.via = "curl";
        d.libcurl = inner.libcurl;
        d.flavour = inner.flavour;
        d.summary = script + " runs curl, which links libcurl dynamically (" + inner.libcurl + ", " + inner.flavour +
                    " flavour); programs it starts inherit LD_PRELOAD";
        d.advice = "curlretry -- " + x.invocation + " ...";
      } else {
        d.verdict = inner.verdict;
        d.summary = script + " runs curl, and for that curl: " + inner.summary;
        d.advice = inner.advice;
      }
      return;
    }
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = script + " is a " + basename_of(x.exec_path) +
                " script that does not run curl; programs it starts are covered if they link libcurl";
    d.advice = "run curlretry doctor on the programs it starts";
    return;
  }
  if (basename_of(x.exec_path) == "git" && depth < 4) {
    // git itself never links libcurl: https remotes run git-remote-http, which inherits LD_PRELOAD.
    const auto exec_dir = run_probe({x.exec_path, "--exec-path"}, std::chrono::seconds(10));
    const auto dir = exec_dir ? lines_of(*exec_dir) : std::vector<std::string>{};
    const std::string helper = dir.empty() ? std::string() : dir[0] + "/git-remote-http";
    if (!helper.empty() && is_executable_file(helper)) {
      const Diagnosis inner = diagnose_at_depth({helper}, depth + 1);
      detail(d, "helper", "http(s) remotes run " + helper);
      for (const auto& line : inner.details) {
        if (line.rfind("program: ", 0) != 0) d.details.push_back(line);
      }
      d.verdict = inner.verdict == DoctorVerdict::works ? DoctorVerdict::works_through : inner.verdict;
      d.via = "git-remote-http";
      d.libcurl = inner.libcurl;
      d.flavour = inner.flavour;
      d.summary = inner.verdict == DoctorVerdict::works
                      ? name + " fetches and pushes over http(s) through git-remote-http, which links libcurl "
                               "dynamically (" + inner.libcurl + ", " + inner.flavour + " flavour)"
                      : name + " uses git-remote-http for http(s), and for that helper: " + inner.summary;
      d.advice = inner.verdict == DoctorVerdict::works ? "curlretry -- " + name + " clone|fetch|push https://..."
                                                       : inner.advice;
      return;
    }
  }
  if (!e.interpreter.empty() && e.names_libcurl) {
    d.verdict = DoctorVerdict::maybe;
    d.summary = name + " mentions libcurl.so but does not link it: it probably loads libcurl at run time (dlopen)";
    d.advice = "try it: curlretry -v -- " + x.invocation +
               " ... and look for curlretry: lines; calls looked up with dlsym() on its own libcurl handle are "
               "not reachable";
    return;
  }
  d.verdict = DoctorVerdict::nothing_to_do;
  d.summary = name + " does not use libcurl (" +
              (e.interpreter.empty() ? std::string("statically linked, no libcurl inside") : "no libcurl in what it loads") +
              ")";
  d.advice = kNothingToRetry;
}

Diagnosis diagnose_at_depth(const std::vector<std::string>& command, int depth) {
  Diagnosis d;
  if (command.empty() || command[0].empty()) {
    d.summary = "no program given";
    return d;
  }
  const auto found = find_program(command[0]);
  if (!found) {
    d.summary = command[0] + ": not found in PATH";
    d.advice = "give a path, or check PATH";
    return d;
  }
  d.program = *found;
  std::error_code ec;
  std::string exec_path = *found;
  std::string script = script_argument(command);

  // Follow `#!` lines (the kernel allows a few levels; so do we).
  for (int level = 0; level < 5; ++level) {
    if (!fs::exists(exec_path, ec)) {
      d.summary = exec_path + ": no such file";
      return d;
    }
    if (!is_executable_file(exec_path)) {
      d.summary = exec_path + ": not an executable file";
      d.advice = "chmod +x it, or name the program that runs it";
      return d;
    }
    d.chain.push_back(exec_path);
    const auto shebang = read_shebang(exec_path);
    if (!shebang) break;
    std::string interpreter = shebang->interpreter;
    detail(d, "script", exec_path + " starts with #!" + interpreter +
                            (shebang->argument.empty() ? "" : " " + shebang->argument));
    if (level == 0) script = exec_path;
    if (basename_of(interpreter) == "env") {
      const auto target = env_target(shebang->argument);
      const auto resolved = target ? find_program(*target) : std::nullopt;
      if (!resolved) {
        d.summary = exec_path + ": env cannot find " + (target ? *target : std::string("a program")) + " in PATH";
        return d;
      }
      interpreter = *resolved;
    }
    exec_path = interpreter;
  }

  Examined x;
  x.exec_path = exec_path;
  x.real_path = fs::weakly_canonical(exec_path, ec).string();
  if (ec) x.real_path = exec_path;
  std::string error;
  const auto elf = read_elf(x.real_path, error);
  if (!elf) {
    d.summary = x.real_path + ": cannot read (" + error + ")";
    return d;
  }
  if (!elf->is_elf) {
    d.summary = x.real_path + ": neither an ELF program nor a #! script";
    return d;
  }
  x.elf = *elf;
  for (std::size_t i = 0; i < command.size() && i < 8; ++i) x.invocation += (i ? " " : "") + command[i];
  // The interpreter is the first file of the chain that names a language (python3, php): it may be
  // a wrapper script (pyenv shims), which is still the right program to ask about its extensions.
  x.interpreter = x.exec_path;
  for (const auto& file : d.chain) {
    const Language language = language_of(file);
    if (language == Language::none) continue;
    if (x.language == Language::none || (x.language == Language::shell && language != Language::shell)) {
      x.language = language;
      x.interpreter = file;
    }
  }
  // `python3 agent.py` where python3 is a wrapper script: the program is agent.py, not the wrapper.
  if (script == x.interpreter) script = script_argument(command);
  // Summaries name what the user typed; for a script, the interpreter's verdicts name the interpreter.
  diagnose_elf(d, x, script, script.empty() ? command[0] : basename_of(x.exec_path), depth);
  return d;
}

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + json_quote(items[i]);
  return out + "]";
}

}  // namespace

std::string_view to_string(DoctorVerdict verdict) {
  switch (verdict) {
    case DoctorVerdict::works: return "works";
    case DoctorVerdict::works_through: return "works-through";
    case DoctorVerdict::maybe: return "maybe";
    case DoctorVerdict::not_reachable: return "not-reachable";
    case DoctorVerdict::preload_ignored: return "preload-ignored";
    case DoctorVerdict::nothing_to_do: return "nothing-to-do";
    case DoctorVerdict::error: return "error";
  }
  return "error";
}

int exit_status(DoctorVerdict verdict) {
  switch (verdict) {
    case DoctorVerdict::works:
    case DoctorVerdict::works_through: return 0;
    case DoctorVerdict::not_reachable:
    case DoctorVerdict::preload_ignored: return 3;
    case DoctorVerdict::nothing_to_do: return 4;
    case DoctorVerdict::maybe: return 5;
    case DoctorVerdict::error: return 1;
  }
  return 1;
}

Diagnosis diagnose(const std::vector<std::string>& command) { return diagnose_at_depth(command, 0); }

int run_doctor(const DoctorOptions& options) {
  if (options.command.empty()) {
    std::cerr << "curlretry doctor: name a program (usage: curlretry doctor [--json] COMMAND|PATH [ARGS...])\n";
    return 2;
  }
  const Diagnosis d = diagnose(options.command);
  if (options.json) {
    std::cout << "{\"verdict\":" << json_quote(to_string(d.verdict)) << ",\"program\":" << json_quote(d.program)
              << ",\"chain\":" << json_list(d.chain) << ",\"via\":" << json_quote(d.via)
              << ",\"libcurl\":" << json_quote(d.libcurl) << ",\"flavour\":" << json_quote(d.flavour)
              << ",\"summary\":" << json_quote(d.summary) << ",\"details\":" << json_list(d.details)
              << ",\"advice\":" << json_quote(d.advice) << "}\n";
  } else {
    std::ostream& out = d.verdict == DoctorVerdict::error ? std::cerr : std::cout;
    if (d.verdict == DoctorVerdict::error) {
      out << "curlretry doctor: " << d.summary << '\n';
      if (!d.advice.empty()) out << "  next: " << d.advice << '\n';
    } else {
      out << to_string(d.verdict) << ": " << d.summary << '\n';
      for (const auto& line : d.details) {
        const auto colon = line.find(": ");
        std::string label = line.substr(0, colon + 1);
        label.append(label.size() < 10 ? 10 - label.size() : 1, ' ');
        out << "  " << label << line.substr(colon + 2) << '\n';
      }
      out << "  next:     " << d.advice << '\n';
    }
  }
  return std::cout.good() ? exit_status(d.verdict) : 1;
}

}  // namespace curlretry::cli
