#include "proxy/ca_command.h"

#include <iostream>
#include <string>
#include <string_view>

#include "core/json_text.h"
#include "proxy/local_ca.h"

namespace curlretry::proxy {
namespace {

constexpr std::string_view kUsage = "usage: curlretry proxy ca [--json]\n";

// VAR=value as a POSIX shell reads it back (`eval "$(curlretry proxy ca)"`).
std::string shell_word(const std::string& text) {
  if (text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+,:@%") ==
      std::string::npos) {
    return text;
  }
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

using core::json_text::quote;

}  // namespace

int run_ca_command(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kUsage
                << "Creates curlretry's local CA once in ${XDG_DATA_HOME:-$HOME/.local/share}/curlretry/ca (the key\n"
                   "never leaves this machine) and prints the variables a program needs to trust the\n"
                   "certificates `curlretry proxy` presents for proxy.intercept hosts. Running it again reuses\n"
                   "the CA and refreshes bundle.pem (the system store plus the CA).\n";
      return 0;
    } else {
      std::cerr << "curlretry: proxy ca: unknown argument \"" << a << "\"\n" << kUsage;
      return 2;
    }
  }
  std::string error;
  const CaPaths paths = ca_paths(&error);
  bool created = false;
  if (error.empty()) error = ensure_ca(paths, &created);
  if (!error.empty()) {
    std::cerr << "curlretry: proxy ca: " << error << '\n';
    return 1;
  }
  const auto variables = ca_environment(paths);
  if (json) {
    std::cout << "{\"dir\":" << quote(paths.dir) << ",\"created\":" << (created ? "true" : "false")
              << ",\"cert\":" << quote(paths.cert) << ",\"bundle\":" << quote(paths.bundle)
              << ",\"env\":{";
    for (std::size_t i = 0; i < variables.size(); ++i) {
      std::cout << (i ? "," : "") << quote(variables[i].first) << ":" << quote(variables[i].second);
    }
    std::cout << "}}\n";
  } else {
    std::cerr << "curlretry: proxy ca: " << (created ? "created" : "using") << " the local CA in " << paths.dir
              << '\n';
    for (const auto& [name, value] : variables) std::cout << name << '=' << shell_word(value) << '\n';
  }
  return 0;
}

}  // namespace curlretry::proxy
