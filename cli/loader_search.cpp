#include "cli/loader_search.h"

#include <glob.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>

#include "cli/path_names.h"
#include "core/ascii.h"

#ifndef CURLRETRY_MULTIARCH
#define CURLRETRY_MULTIARCH ""
#endif

namespace curlretry::cli::doctor {
namespace {

namespace fs = std::filesystem;

void read_ld_so_conf(const std::string& file, std::vector<std::string>& dirs, int depth) {
  if (depth > 4) return;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = std::string(core::ascii::field_value(line));
    if (line.empty()) continue;
    if (line.rfind("include", 0) == 0 && line.size() > 8 && (line[7] == ' ' || line[7] == '\t')) {
      std::string pattern(core::ascii::strip_leading(std::string_view(line).substr(8), core::ascii::kBlanks));
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
  const char* library_path = std::getenv("LD_LIBRARY_PATH");
  for (const auto& d : split_dir_list(library_path != nullptr ? library_path : "", ":;")) dirs.push_back(d);
  for (const auto& d : requester.runpath) dirs.push_back(expand_origin(d, origin));
  for (const auto& d : system_library_dirs()) dirs.push_back(d);
  for (const auto& d : dirs) {
    const std::string candidate = d + "/" + name;
    if (::access(candidate.c_str(), F_OK) == 0 && header_matches(candidate, requester)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

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

}  // namespace curlretry::cli::doctor
