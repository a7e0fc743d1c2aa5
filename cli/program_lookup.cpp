#include "cli/program_lookup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "cli/path_names.h"
#include "core/ascii.h"

namespace curlretry::cli::doctor {
namespace {

bool name_matches(const std::string& base, std::string_view stem) {
  if (base.rfind(stem, 0) != 0) return false;
  return std::all_of(base.begin() + static_cast<long>(stem.size()), base.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

}  // namespace

bool is_executable_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_program(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  const std::string list = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    const std::string dir = end > start ? list.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + command;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<Shebang> read_shebang(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buf[256];
  in.read(buf, sizeof buf);
  const std::string head(buf, static_cast<std::size_t>(in.gcount()));
  if (head.size() < 3 || head[0] != '#' || head[1] != '!') return std::nullopt;
  std::string line = head.substr(2, head.find('\n') == std::string::npos ? std::string::npos : head.find('\n') - 2);
  // Blanks before the interpreter, blanks and a CR after the line (a script saved on Windows).
  const std::string_view text = core::ascii::field_value(line);
  if (text.empty()) return std::nullopt;
  const auto end = text.find_first_of(core::ascii::kBlanks);
  Shebang s;
  s.interpreter = std::string(text.substr(0, end));
  if (end != std::string_view::npos)
    s.argument = std::string(core::ascii::strip_leading(text.substr(end), core::ascii::kBlanks));
  return s;
}

std::optional<std::string> env_target(const std::string& argument) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < argument.size()) {
    const auto b = argument.find_first_not_of(" \t", start);
    if (b == std::string::npos) break;
    const auto e = argument.find_first_of(" \t", b);
    words.push_back(argument.substr(b, e == std::string::npos ? std::string::npos : e - b));
    start = e == std::string::npos ? argument.size() : e;
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "-S" || w == "-i" || w == "--" || w.rfind("--split-string", 0) == 0) continue;
    if (w.rfind("-S", 0) == 0) return env_target(w.substr(2));
    if (w == "-u" || w == "--unset" || w == "-C" || w == "--chdir") {
      ++i;
      continue;
    }
    if (w[0] == '-' || w.find('=') != std::string::npos) continue;
    return w;
  }
  return std::nullopt;
}

Language language_of(const std::string& program) {
  const std::string base = basename_of(program);
  if (name_matches(base, "python")) return Language::python;
  if (name_matches(base, "php") || name_matches(base, "php-cli")) return Language::php;
  for (const char* shell : {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"}) {
    if (base == shell) return Language::shell;
  }
  return Language::none;
}

std::string read_text(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

bool contains_word(const std::string& text, std::string_view word) {
  auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !is_name_char(text[at - 1]);
    const bool right = at + word.size() >= text.size() || !is_name_char(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

std::string script_argument(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-c" || a == "-m" || a == "-r") return {};
    if (a.empty() || a[0] == '-') continue;
    struct stat st{};
    return ::stat(a.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? a : std::string();
  }
  return {};
}

}  // namespace curlretry::cli::doctor
