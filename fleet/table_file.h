// Mapping the store's file: open it when it is whole and ours, else build a fresh one beside it
// and put it in place atomically (a crash mid-build leaves only a stray temporary file, never a
// torn table). Only this file does system calls; once mapped, the store is plain memory.
#pragma once

#include <string>
#include <vector>

#include "fleet/layout.h"

namespace curlretry::fleet {

struct Mapping {
  void* base = nullptr;  // kFileSize bytes, MAP_SHARED; nullptr when the store is off
  std::string path;
  std::string error;                // why there is no mapping
  std::vector<std::string> notes;   // e.g. "rebuilt a torn table file"
};

// Opens (creating or rebuilding) `dir`/table-v3. `dir` must already be ours (ensure_private_dir).
Mapping map_table(const std::string& dir);

// Opens an existing table read-write without ever creating or rebuilding it (for the CLI).
Mapping map_existing_table(const std::string& dir);

void unmap_table(Mapping& mapping);

// Why `base` is not a complete table of this version; empty when it is.
std::string table_problem(const void* base);

}  // namespace curlretry::fleet
