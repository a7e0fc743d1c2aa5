#include "cli/elf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <string_view>

#include "cli/path_names.h"
#include "elf/dynamic.h"

namespace curlretry::cli::doctor {
namespace {

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

// The NUL-terminated string at `at`, at most `limit` bytes of it; empty outside the file.
std::string string_at(const elf::Source& source, std::uint64_t at, std::size_t limit) {
  std::string text(limit + 1, '\0');
  const long n = source.read_string(at, text.data(), text.size());
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

// DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH of one PT_DYNAMIC segment.
void read_dynamic(const elf::Source& source, const elf::Header& header, const elf::Segment& segment, ElfInfo& info) {
  const elf::Dynamic dynamic = elf::file_dynamic(source, header, segment);
  if (!dynamic.has_strtab) return;
  auto str = [&](std::uint64_t index) {
    std::string text(4097, '\0');
    const long n = elf::dynamic_string(source, dynamic, index, text.data(), text.size());
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return text;
  };
  elf::DynamicEntry entry;
  for (std::uint64_t i = 0; elf::read_dynamic_entry(source, dynamic, i, &entry); ++i) {
    if (entry.tag == elf::kDtNeeded) info.needed.push_back(str(entry.value));
    if (entry.tag == elf::kDtSoname) info.soname = str(entry.value);
    if (entry.tag == elf::kDtRpath) info.rpath = split_dir_list(str(entry.value), ":");
    if (entry.tag == elf::kDtRunpath) info.runpath = split_dir_list(str(entry.value), ":");
  }
}

// The section names, through the section header string table.
void read_section_names(const elf::Source& source, const elf::Header& h, std::uint64_t size, ElfInfo& info) {
  const bool is64 = h.format.is64;
  if (h.shoff == 0 || h.shnum == 0 || h.shnum >= 65280 || h.shentsize < (is64 ? 64u : 40u) || h.shstrndx >= h.shnum)
    return;
  std::uint64_t names = 0;
  if (!elf::read_uint(source, h.format, h.shoff + h.shstrndx * h.shentsize + (is64 ? 24 : 16), is64 ? 8 : 4, &names))
    return;
  for (std::uint64_t i = 0; i < h.shnum; ++i) {
    std::uint64_t name = 0;
    if (!elf::read_uint(source, h.format, h.shoff + i * h.shentsize, 4, &name)) return;
    info.sections.insert(string_at(source, names + name, 256));
    if (names + name >= size) return;  // a table outside the file: no more names from it
  }
}

void scan_signatures(std::string_view bytes, ElfInfo& info) {
  const std::size_t go = bytes.find(kGoBuildInfoMagic);
  info.go = go != std::string_view::npos || info.sections.count(".go.buildinfo") > 0 ||
            info.sections.count(".gopclntab") > 0 || info.sections.count(".note.go.buildid") > 0;
  if (go != std::string_view::npos && go + 33 < bytes.size() && (static_cast<std::uint8_t>(bytes[go + 15]) & 2) != 0) {
    // Go 1.18+: the version follows as a varint-prefixed string at offset 32.
    std::uint64_t len = 0;
    std::size_t at = go + 32;
    for (int shift = 0; at < bytes.size() && shift < 28; shift += 7) {
      const auto byte = static_cast<std::uint8_t>(bytes[at++]);
      len |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    if (len > 0 && len < 64 && at + len <= bytes.size()) {
      const std::string version(bytes.substr(at, len));
      if (version.rfind("go", 0) == 0) info.go_version = version;
    }
  }
  if (const std::size_t at = bytes.find(kCurlClientSignature); at != std::string_view::npos) {
    std::string version;
    for (std::size_t i = at + kCurlClientSignature.size(); i < bytes.size() && version.size() < 24; ++i) {
      const char c = bytes[i];
      if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) break;
      version += c;
    }
    info.curl_inside = version.empty() ? "unknown version" : version;
  } else if (bytes.find(kCurlErrorSignature) != std::string_view::npos) {
    info.curl_inside = "unknown version";
  }
  info.names_libcurl = bytes.find("libcurl.so") != std::string_view::npos ||
                       bytes.find("libcurl-gnutls.so") != std::string_view::npos;
}

ElfInfo read_bytes(std::string_view bytes) {
  ElfInfo info;
  const elf::MemorySource source(bytes.data(), bytes.size());
  elf::Header header;
  if (!elf::read_header(source, &header)) return info;
  info.is_elf = true;
  info.is64 = header.format.is64;
  info.little = header.format.little;
  info.type = header.type;
  info.machine = header.machine;
  elf::Segment segment;
  for (std::uint64_t i = 0; elf::read_segment(source, header, i, &segment); ++i) {
    if (segment.type == elf::kPtInterp)
      info.interpreter = string_at(source, segment.offset, std::min<std::uint64_t>(segment.filesz, 4096));
    if (segment.type != elf::kPtDynamic) continue;
    info.dynamic = true;
    read_dynamic(source, header, segment, info);
  }
  read_section_names(source, header, bytes.size(), info);
  scan_signatures(bytes, info);
  return info;
}

}  // namespace

std::optional<ElfInfo> read_elf(const std::string& path, std::string& error) {
  Mapping map;
  if (!map.open(path, error)) return std::nullopt;
  return read_bytes(map.bytes());
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

}  // namespace curlretry::cli::doctor
