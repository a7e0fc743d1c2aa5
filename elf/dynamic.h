// ELF read by hand: the file header, the program headers and the dynamic array with its strings
// (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH), from a file, a file in memory or a loaded object.
// Both word sizes and byte orders. Every read is bounded and checked; nothing allocates, so the
// preload library can use it inside a host's dlopen().
#pragma once

#include <cstddef>
#include <cstdint>

namespace curlretry::elf {

// Where the bytes come from. `at` is a file offset, or an address for a loaded object.
class Source {
 public:
  // Copies exactly `n` bytes at `at`; false when they are not all there.
  virtual bool read(std::uint64_t at, void* out, std::size_t n) const = 0;
  // Copies the NUL-terminated string at `at` (at most cap - 1 bytes of it, cap > 0) and terminates
  // it; its length, or -1 when `at` is outside the source. A string cut by the end of the source
  // is what precedes the end.
  virtual long read_string(std::uint64_t at, char* out, std::size_t cap) const = 0;

 protected:
  ~Source() = default;
};

// A file, read with pread(2). Does not own the descriptor.
class FileSource final : public Source {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  bool read(std::uint64_t at, void* out, std::size_t n) const override;
  long read_string(std::uint64_t at, char* out, std::size_t cap) const override;

 private:
  int fd_;
};

// Bytes in memory, e.g. a mapped file.
class MemorySource final : public Source {
 public:
  MemorySource(const char* data, std::uint64_t size) : data_(data), size_(size) {}
  bool read(std::uint64_t at, void* out, std::size_t n) const override;
  long read_string(std::uint64_t at, char* out, std::size_t cap) const override;

 private:
  const char* data_;
  std::uint64_t size_;
};

// The address space of this process, for an object the loader has mapped (addresses it gives).
class LoadedSource final : public Source {
 public:
  bool read(std::uint64_t at, void* out, std::size_t n) const override;
  long read_string(std::uint64_t at, char* out, std::size_t cap) const override;
};

struct Format {
  bool is64 = true;
  bool little = true;
};

// The format of this process's own objects.
Format native_format();

// An unsigned integer of `size` (1 to 8) bytes in `format`'s byte order.
bool read_uint(const Source& source, Format format, std::uint64_t at, int size, std::uint64_t* out);

constexpr std::uint32_t kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3;
constexpr std::int64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14, kDtRpath = 15,
                       kDtRunpath = 29;

struct Header {
  Format format;
  std::uint16_t type = 0;
  std::uint16_t machine = 0;
  std::uint64_t phoff = 0, shoff = 0;
  std::uint16_t phentsize = 0, phnum = 0, shentsize = 0, shnum = 0, shstrndx = 0;
};

// False unless the source starts with the ELF magic, a known word size and byte order, and is at
// least as long as a 32-bit header. Fields past the end of a short source read as 0.
bool read_header(const Source& source, Header* header);

struct Segment {
  std::uint32_t type = 0;
  std::uint64_t offset = 0, vaddr = 0, filesz = 0;
};

// Program headers are read while index < min(phnum, kMaxSegments) and the entry size is sane.
constexpr std::uint64_t kMaxSegments = 4096;

// Program header `index`; false past the last one or on a short read.
bool read_segment(const Source& source, const Header& header, std::uint64_t index, Segment* segment);

// The file offset of virtual address `vaddr`, through the PT_LOAD segments.
bool file_offset(const Source& source, const Header& header, std::uint64_t vaddr, std::uint64_t* offset);

struct DynamicEntry {
  std::int64_t tag = 0;
  std::uint64_t value = 0;
};

// A dynamic array: its entries at `at` (at most `max_entries`, ending at DT_NULL) and, once
// located, its string table.
struct Dynamic {
  Format format;
  std::uint64_t at = 0;
  std::uint64_t max_entries = 0;
  std::uint64_t strtab = 0;  // where the string table is in the source
  std::uint64_t strsz = 0;  // DT_STRSZ: strings lie within it (no DT_STRSZ, no strings)
  bool has_strtab = false;
};

// The size of one entry in `format`.
std::uint64_t dynamic_entry_size(Format format);

// Entry `index`; false at DT_NULL, past max_entries or on a short read.
bool read_dynamic_entry(const Source& source, const Dynamic& dynamic, std::uint64_t index, DynamicEntry* entry);

// The dynamic array of the PT_DYNAMIC segment `segment` of a file, its string table located
// through the PT_LOAD segments (has_strtab false when it cannot be).
Dynamic file_dynamic(const Source& source, const Header& header, const Segment& segment);

// The dynamic array of a loaded object at `address` (load base `base`): glibc relocates
// DT_STRTAB in place, other loaders may not (a value below the base has not been).
Dynamic loaded_dynamic(const Source& source, std::uint64_t address, std::uint64_t base);

// The string at `index` of the dynamic string table, as Source::read_string; -1 when there is no
// table or the index is not within DT_STRSZ.
long dynamic_string(const Source& source, const Dynamic& dynamic, std::uint64_t index, char* out, std::size_t cap);

// Copies the first DT_NEEDED name that starts with `prefix` (cut to cap - 1 bytes); false when
// there is none.
bool find_needed(const Source& source, const Dynamic& dynamic, const char* prefix, char* out, std::size_t cap);

// True when the file at `path` is an ELF object of this process's format with a DT_NEEDED entry
// that starts with `prefix`. Any malformation gives false.
bool file_needs(const char* path, const char* prefix);

}  // namespace curlretry::elf
