// Where the loader would find each DT_NEEDED of a program (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH,
// ld.so.conf, the default directories), and the closure of everything the program loads.
#pragma once

#include <string>
#include <vector>

#include "cli/elf_file.h"

namespace curlretry::cli::doctor {

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

// The closure of the program at `path` (described by `root`), at most 400 objects.
Closure load_closure(const std::string& path, const ElfInfo& root);

}  // namespace curlretry::cli::doctor
