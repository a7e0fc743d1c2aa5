#include "elf/dynamic.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace curlretry::elf {
namespace {

// Far more than any linker writes; a bound for a malformed or hostile file.
constexpr std::uint64_t kMaxDynamicEntries = 4096;

// Closes the descriptor on every way out.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// The string in `out[0, length)` ends at its first NUL; the rest is dropped.
long terminate(char* out, std::size_t length) {
  const void* nul = std::memchr(out, '\0', length);
  const std::size_t size = nul != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nul) - out) : length;
  out[size] = '\0';
  return static_cast<long>(size);
}

// DT_STRTAB (as written) and DT_STRSZ of a dynamic array; the last of each wins, as for the loader.
void scan_strings(const Source& source, Dynamic& dynamic, std::uint64_t* strtab) {
  *strtab = 0;
  DynamicEntry entry;
  for (std::uint64_t i = 0; read_dynamic_entry(source, dynamic, i, &entry); ++i) {
    if (entry.tag == kDtStrtab) *strtab = entry.value;
    if (entry.tag == kDtStrsz) dynamic.strsz = entry.value;
  }
}

}  // namespace

bool FileSource::read(std::uint64_t at, void* out, std::size_t n) const {
  if (at > static_cast<std::uint64_t>(INT64_MAX)) return false;
  return ::pread(fd_, out, n, static_cast<off_t>(at)) == static_cast<ssize_t>(n);
}

long FileSource::read_string(std::uint64_t at, char* out, std::size_t cap) const {
  if (cap == 0 || at > static_cast<std::uint64_t>(INT64_MAX)) return -1;
  const ssize_t got = ::pread(fd_, out, cap - 1, static_cast<off_t>(at));
  if (got < 0 || (got == 0 && cap > 1)) return -1;
  return terminate(out, static_cast<std::size_t>(got));
}

bool MemorySource::read(std::uint64_t at, void* out, std::size_t n) const {
  if (at > size_ || size_ - at < n) return false;
  std::memcpy(out, data_ + at, n);
  return true;
}

long MemorySource::read_string(std::uint64_t at, char* out, std::size_t cap) const {
  if (cap == 0 || at >= size_) return -1;
  const std::size_t n = size_ - at < cap - 1 ? static_cast<std::size_t>(size_ - at) : cap - 1;
  std::memcpy(out, data_ + at, n);
  return terminate(out, n);
}

bool LoadedSource::read(std::uint64_t at, void* out, std::size_t n) const {
  std::memcpy(out, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(at)), n);
  return true;
}

long LoadedSource::read_string(std::uint64_t at, char* out, std::size_t cap) const {
  if (cap == 0) return -1;
  // strnlen, not a copy of cap - 1 bytes: the string table may end right before an unmapped page.
  const char* text = reinterpret_cast<const char*>(static_cast<std::uintptr_t>(at));
  const std::size_t n = ::strnlen(text, cap - 1);
  std::memcpy(out, text, n);
  out[n] = '\0';
  return static_cast<long>(n);
}

Format native_format() {
  Format format;
  format.is64 = sizeof(void*) == 8;
  format.little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
  return format;
}

bool read_uint(const Source& source, Format format, std::uint64_t at, int size, std::uint64_t* out) {
  unsigned char bytes[8];
  if (size < 1 || size > 8 || !source.read(at, bytes, static_cast<std::size_t>(size))) return false;
  std::uint64_t value = 0;
  for (int i = 0; i < size; ++i) {
    value |= static_cast<std::uint64_t>(bytes[format.little ? i : size - 1 - i]) << (8 * i);
  }
  *out = value;
  return true;
}

bool read_header(const Source& source, Header* header) {
  unsigned char ident[52];
  if (!source.read(0, ident, sizeof ident) || std::memcmp(ident, "\x7f" "ELF", 4) != 0) return false;
  if ((ident[4] != 1 && ident[4] != 2) || (ident[5] != 1 && ident[5] != 2)) return false;
  Header h;
  h.format.is64 = ident[4] == 2;
  h.format.little = ident[5] == 1;
  const bool is64 = h.format.is64;
  auto field = [&](std::uint64_t at, int size) {
    std::uint64_t value = 0;
    return read_uint(source, h.format, at, size, &value) ? value : 0;
  };
  h.type = static_cast<std::uint16_t>(field(16, 2));
  h.machine = static_cast<std::uint16_t>(field(18, 2));
  h.phoff = is64 ? field(32, 8) : field(28, 4);
  h.shoff = is64 ? field(40, 8) : field(32, 4);
  h.phentsize = static_cast<std::uint16_t>(field(is64 ? 54 : 42, 2));
  h.phnum = static_cast<std::uint16_t>(field(is64 ? 56 : 44, 2));
  h.shentsize = static_cast<std::uint16_t>(field(is64 ? 58 : 46, 2));
  h.shnum = static_cast<std::uint16_t>(field(is64 ? 60 : 48, 2));
  h.shstrndx = static_cast<std::uint16_t>(field(is64 ? 62 : 50, 2));
  *header = h;
  return true;
}

bool read_segment(const Source& source, const Header& header, std::uint64_t index, Segment* segment) {
  const bool is64 = header.format.is64;
  if (index >= header.phnum || index >= kMaxSegments || header.phentsize < (is64 ? 56u : 32u)) return false;
  const std::uint64_t at = header.phoff + index * header.phentsize;
  const int word = is64 ? 8 : 4;
  std::uint64_t type = 0;
  Segment s;
  if (!read_uint(source, header.format, at, 4, &type) ||
      !read_uint(source, header.format, at + (is64 ? 8 : 4), word, &s.offset) ||
      !read_uint(source, header.format, at + (is64 ? 16 : 8), word, &s.vaddr) ||
      !read_uint(source, header.format, at + (is64 ? 32 : 16), word, &s.filesz))
    return false;
  s.type = static_cast<std::uint32_t>(type);
  *segment = s;
  return true;
}

bool file_offset(const Source& source, const Header& header, std::uint64_t vaddr, std::uint64_t* offset) {
  Segment s;
  for (std::uint64_t i = 0; read_segment(source, header, i, &s); ++i) {
    if (s.type == kPtLoad && vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) {
      *offset = s.offset + (vaddr - s.vaddr);
      return true;
    }
  }
  return false;
}

std::uint64_t dynamic_entry_size(Format format) { return format.is64 ? 16 : 8; }

bool read_dynamic_entry(const Source& source, const Dynamic& dynamic, std::uint64_t index, DynamicEntry* entry) {
  if (index >= dynamic.max_entries) return false;
  const std::uint64_t at = dynamic.at + index * dynamic_entry_size(dynamic.format);
  std::uint64_t tag = 0, value = 0;
  if (dynamic.format.is64) {
    if (!read_uint(source, dynamic.format, at, 8, &tag) || !read_uint(source, dynamic.format, at + 8, 8, &value))
      return false;
  } else {
    if (!read_uint(source, dynamic.format, at, 4, &tag) || !read_uint(source, dynamic.format, at + 4, 4, &value))
      return false;
    tag = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(tag)));
  }
  if (static_cast<std::int64_t>(tag) == kDtNull) return false;
  entry->tag = static_cast<std::int64_t>(tag);
  entry->value = value;
  return true;
}

Dynamic file_dynamic(const Source& source, const Header& header, const Segment& segment) {
  Dynamic dynamic;
  dynamic.format = header.format;
  dynamic.at = segment.offset;
  const std::uint64_t count = segment.filesz / dynamic_entry_size(header.format);
  dynamic.max_entries = count < kMaxDynamicEntries ? count : kMaxDynamicEntries;
  std::uint64_t strtab = 0;
  scan_strings(source, dynamic, &strtab);
  dynamic.has_strtab = strtab != 0 && file_offset(source, header, strtab, &dynamic.strtab);
  return dynamic;
}

Dynamic loaded_dynamic(const Source& source, std::uint64_t address, std::uint64_t base) {
  Dynamic dynamic;
  dynamic.format = native_format();
  dynamic.at = address;
  dynamic.max_entries = kMaxDynamicEntries;
  std::uint64_t strtab = 0;
  scan_strings(source, dynamic, &strtab);
  dynamic.has_strtab = strtab != 0;
  dynamic.strtab = strtab < base ? strtab + base : strtab;
  return dynamic;
}

long dynamic_string(const Source& source, const Dynamic& dynamic, std::uint64_t index, char* out, std::size_t cap) {
  if (!dynamic.has_strtab || index >= dynamic.strsz) return -1;
  return source.read_string(dynamic.strtab + index, out, cap);
}

bool find_needed(const Source& source, const Dynamic& dynamic, const char* prefix, char* out, std::size_t cap) {
  const std::size_t length = std::strlen(prefix);
  DynamicEntry entry;
  for (std::uint64_t i = 0; read_dynamic_entry(source, dynamic, i, &entry); ++i) {
    if (entry.tag == kDtNeeded && dynamic_string(source, dynamic, entry.value, out, cap) >= 0 &&
        std::strncmp(out, prefix, length) == 0)
      return true;
  }
  return false;
}

bool file_needs(const char* path, const char* prefix) {
  Descriptor fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  const FileSource source(fd.get());
  Header header;
  const Format native = native_format();
  if (!read_header(source, &header) || header.format.is64 != native.is64 || header.format.little != native.little)
    return false;
  Segment segment, dynamic_segment;
  bool found = false;
  for (std::uint64_t i = 0; read_segment(source, header, i, &segment); ++i) {
    if (segment.type == kPtDynamic) {
      dynamic_segment = segment;
      found = true;
    }
  }
  if (!found) return false;
  char name[64];
  if (std::strlen(prefix) >= sizeof name) return false;
  return find_needed(source, file_dynamic(source, header, dynamic_segment), prefix, name, sizeof name);
}

}  // namespace curlretry::elf
