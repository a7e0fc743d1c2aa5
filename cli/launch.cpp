#include "cli/launch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "cli/library_path.h"
#include "config/config.h"

namespace curlretry::cli {

std::string prepend_preload(const std::string& library, const char* current) {
  if (current == nullptr || *current == '\0') return library;
  // ld.so splits LD_PRELOAD on ':' and ' '.
  const std::string list = current;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find_first_of(": ", start), list.size());
    if (list.compare(start, end - start, library) == 0 && end - start == library.size()) return list;
    start = end + 1;
  }
  return library + ":" + list;
}

int run_launch(const LaunchOptions& options) {
  if (options.command.empty()) {
    std::cerr << "curlretry: no command to run (usage: curlretry [--config F] [-v] -- COMMAND [ARGS...])\n";
    return 2;
  }
  const config::LoadResult loaded = config::load(config::Environment::process(), options.config);
  for (const auto& warning : loaded.warnings) std::cerr << "curlretry: warning: " << warning << '\n';
  if (!loaded.ok()) {
    std::cerr << "curlretry: " << loaded.error << '\n';
    return 1;
  }

  const LibraryLookup library = find_library();
  if (!library.path) {
    std::cerr << "curlretry: " << library.error << '\n';
    return 1;
  }
  if (library.path->find_first_of(": ") != std::string::npos) {
    std::cerr << "curlretry: " << *library.path << ": LD_PRELOAD cannot carry a path with ':' or ' '\n";
    return 1;
  }

  // Children may chdir or change HOME; an absolute path keeps them on the file validated here.
  if (!loaded.config->file.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(loaded.config->file, ec);
    const std::string path = ec ? loaded.config->file : absolute.lexically_normal().string();
    ::setenv("CURLRETRY_CONFIG", path.c_str(), 1);
  }
  if (options.verbose) ::setenv("CURLRETRY_LOG", "debug", 1);
  const std::string preload = prepend_preload(*library.path, std::getenv("LD_PRELOAD"));
  ::setenv("LD_PRELOAD", preload.c_str(), 1);

  std::vector<char*> argv;
  argv.reserve(options.command.size() + 1);
  for (const auto& arg : options.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  ::execvp(argv[0], argv.data());

  // Same exit codes as a shell: 127 not found, 126 found but not runnable.
  const int e = errno;
  if (e == ENOENT || e == ENOTDIR) {
    std::cerr << "curlretry: " << options.command[0] << ": command not found\n";
    return 127;
  }
  std::cerr << "curlretry: " << options.command[0] << ": " << std::error_code(e, std::generic_category()).message()
            << '\n';
  return 126;
}

}  // namespace curlretry::cli
