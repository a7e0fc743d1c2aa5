#include "shim/elf_needed.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace curlretry::shim {
namespace {

constexpr size_t kMaxHeaders = 256;
constexpr size_t kMaxDynamic = 4096;

bool read_at(int fd, void* out, size_t n, off_t offset) {
  return ::pread(fd, out, n, offset) == static_cast<ssize_t>(n);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// File offset of virtual address `vaddr`, through the PT_LOAD segments.
bool file_offset(const std::vector<Elf64_Phdr>& headers, Elf64_Addr vaddr, off_t* offset) {
  for (const auto& h : headers) {
    if (h.p_type == PT_LOAD && vaddr >= h.p_vaddr && vaddr < h.p_vaddr + h.p_filesz) {
      *offset = static_cast<off_t>(h.p_offset + (vaddr - h.p_vaddr));
      return true;
    }
  }
  return false;
}

}  // namespace

bool elf_needs_libcurl(const char* path) {
  Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  Elf64_Ehdr eh;
  if (!read_at(fd.get(), &eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > kMaxHeaders)
    return false;
  std::vector<Elf64_Phdr> headers(eh.e_phnum);
  if (!read_at(fd.get(), headers.data(), headers.size() * sizeof(Elf64_Phdr), static_cast<off_t>(eh.e_phoff)))
    return false;
  const Elf64_Phdr* dynamic = nullptr;
  for (const auto& h : headers)
    if (h.p_type == PT_DYNAMIC) dynamic = &h;
  if (dynamic == nullptr) return false;
  size_t count = std::min<size_t>(dynamic->p_filesz / sizeof(Elf64_Dyn), kMaxDynamic);
  std::vector<Elf64_Dyn> entries(count);
  if (!read_at(fd.get(), entries.data(), count * sizeof(Elf64_Dyn), static_cast<off_t>(dynamic->p_offset)))
    return false;
  Elf64_Addr strtab = 0;
  for (const auto& d : entries)
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
  off_t strtab_offset;
  if (strtab == 0 || !file_offset(headers, strtab, &strtab_offset)) return false;
  for (const auto& d : entries) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag != DT_NEEDED) continue;
    char name[8] = {};
    if (read_at(fd.get(), name, 7, strtab_offset + static_cast<off_t>(d.d_un.d_val)) &&
        std::memcmp(name, "libcurl", 7) == 0)
      return true;
  }
  return false;
}

}  // namespace curlretry::shim
