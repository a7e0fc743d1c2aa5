#include "fleet/table_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>

namespace curlretry::fleet {
namespace {

using layout::Entry;
using layout::Header;

std::string sys_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

void* map_fd(int fd) {
  void* p = ::mmap(nullptr, layout::kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Why the open file `fd` cannot be used as is; empty when it can be mapped and checked.
std::string file_problem(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_uid != ::getuid()) return "it belongs to uid " + std::to_string(st.st_uid);
  if ((st.st_mode & 077) != 0) return "it is open to other users";
  if (static_cast<std::size_t>(st.st_size) != layout::kFileSize) {
    return "its size is " + std::to_string(st.st_size) + " bytes, not " + std::to_string(layout::kFileSize);
  }
  return {};
}

// A fresh table in a temporary file beside `path`; returns the temporary file's name, or empty.
std::string build_fresh(const std::string& path, std::string& error) {
  const std::string tmp = path + "." + std::to_string(::getpid()) + ".tmp";
  ::unlink(tmp.c_str());  // a leftover of a crashed build by a process that had our pid
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = sys_error("cannot create", tmp);
    return {};
  }
  void* base = nullptr;
  if (::ftruncate(fd, static_cast<off_t>(layout::kFileSize)) != 0 || (base = map_fd(fd)) == nullptr) {
    error = sys_error("cannot size or map", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return {};
  }
  ::close(fd);
  // ftruncate gave zeros: every entry is free. Only the header needs writing.
  auto* h = static_cast<Header*>(base);
  h->version = layout::kVersion;
  h->entries = layout::kEntries;
  h->entry_size = sizeof(Entry);
  h->slots = core::budget::kSlots;
  h->slot_ms = static_cast<std::uint32_t>(core::budget::kSlotWidth.count());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  h->created_ms.store(static_cast<std::uint64_t>(now.count()), std::memory_order_relaxed);
  h->magic.store(layout::kMagic, std::memory_order_release);
  ::munmap(base, layout::kFileSize);
  return tmp;
}

// Opens `path` and maps it when whole; `problem` says why not otherwise. -1: missing.
void* open_whole(const std::string& path, std::string& problem, bool& missing) {
  missing = false;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) {
      missing = true;
    } else {
      problem = std::string("cannot open it: ") + std::strerror(errno);
    }
    return nullptr;
  }
  problem = file_problem(fd);
  void* base = problem.empty() ? map_fd(fd) : nullptr;
  if (problem.empty() && base == nullptr) problem = std::string("cannot map it: ") + std::strerror(errno);
  ::close(fd);
  if (base == nullptr) return nullptr;
  problem = table_problem(base);
  if (!problem.empty()) {
    ::munmap(base, layout::kFileSize);
    return nullptr;
  }
  return base;
}

}  // namespace

std::string table_problem(const void* base) {
  const auto* h = static_cast<const Header*>(base);
  if (h->magic.load(std::memory_order_acquire) != layout::kMagic) return "it is not a complete curlretry table";
  if (h->version != layout::kVersion || h->entries != layout::kEntries || h->entry_size != sizeof(Entry) ||
      h->slots != static_cast<std::uint32_t>(core::budget::kSlots) ||
      h->slot_ms != static_cast<std::uint32_t>(core::budget::kSlotWidth.count())) {
    return "its layout is not this version's";
  }
  return {};
}

Mapping map_table(const std::string& dir) {
  Mapping m;
  m.path = dir + "/" + layout::kFileName;
  // Bounded: each round either maps a whole table or puts one in place.
  for (int round = 0; round < 4; ++round) {
    std::string problem;
    bool missing = false;
    if ((m.base = open_whole(m.path, problem, missing)) != nullptr) return m;
    std::string error;
    const std::string tmp = build_fresh(m.path, error);
    if (tmp.empty()) {
      m.error = error;
      return m;
    }
    if (missing) {
      // link, not rename: a table another process put there first wins, and we use that one.
      if (::link(tmp.c_str(), m.path.c_str()) != 0 && errno != EEXIST) {
        m.error = sys_error("cannot create", m.path);
        ::unlink(tmp.c_str());
        return m;
      }
    } else {
      if (::rename(tmp.c_str(), m.path.c_str()) != 0) {
        m.error = sys_error("cannot replace", m.path);
        ::unlink(tmp.c_str());
        return m;
      }
      m.notes.push_back("rebuilt the fleet table " + m.path + " (" + problem + ")");
    }
    ::unlink(tmp.c_str());
  }
  m.error = "cannot settle on a fleet table in " + dir + " (it keeps changing)";
  return m;
}

Mapping map_existing_table(const std::string& dir) {
  Mapping m;
  m.path = dir + "/" + layout::kFileName;
  std::string problem;
  bool missing = false;
  m.base = open_whole(m.path, problem, missing);
  if (m.base == nullptr) m.error = missing ? "no fleet table at " + m.path : m.path + ": " + problem;
  return m;
}

void unmap_table(Mapping& mapping) {
  if (mapping.base != nullptr) ::munmap(mapping.base, layout::kFileSize);
  mapping.base = nullptr;
}

}  // namespace curlretry::fleet
