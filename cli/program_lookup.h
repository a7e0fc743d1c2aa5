// Finding the program a command names (PATH, as execvp does), its `#!` line and `env` target, the
// language of an interpreter, and what a script's text mentions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace curlretry::cli::doctor {

// A regular file this process may execute.
bool is_executable_file(const std::string& path);

// As execvp(3) would: a name with a slash is a path, anything else is looked up in PATH.
std::optional<std::string> find_program(const std::string& command);

struct Shebang {
  std::string interpreter;
  std::string argument;  // the kernel passes the rest of the line as one argument
};

// The `#!` line of the file, if it has one.
std::optional<Shebang> read_shebang(const std::string& path);

// `#!/usr/bin/env [-S] [VAR=x] python3 -u`: the program env will run.
std::optional<std::string> env_target(const std::string& argument);

enum class Language { none, python, php, shell };

// The language of an interpreter, by its file name (python3.11, php8.2, bash, ...).
Language language_of(const std::string& program);

// The first `limit` bytes of a file (empty when it cannot be read).
std::string read_text(const std::string& path, std::size_t limit = 1 << 20);

// `word` appears in `text` not as part of a longer name.
bool contains_word(const std::string& text, std::string_view word);

// The first argument that names an existing file: the script an interpreter would run.
std::string script_argument(const std::vector<std::string>& args);

}  // namespace curlretry::cli::doctor
