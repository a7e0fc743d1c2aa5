// A scratch directory and environment variables for one test, both put back after it: what the
// tests of the launcher's readers of the agents' own files (Claude Code's settings, Codex's
// config.toml, Gemini CLI's .env, Pi's models.json and auth.json) each need around them.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace curlretry::proxy::testing {

class Scratch {
 public:
  Scratch() {
    char dir[] = "/tmp/curlretry-scratch-XXXXXX";
    if (::mkdtemp(dir) != nullptr) dir_ = dir;
    EXPECT_FALSE(dir_.empty()) << "mkdtemp";
  }
  ~Scratch() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      it->second ? ::setenv(it->first.c_str(), it->second->c_str(), 1) : ::unsetenv(it->first.c_str());
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const std::string& dir() const { return dir_; }
  // DIR/RELATIVE.
  std::string path(const std::string& relative) const { return dir_ + "/" + relative; }

  // Sets (nullptr: unsets) NAME until the end of the test.
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  void set(const char* name, const std::string& value) { set(name, value.c_str()); }

  // Writes DIR/RELATIVE (its directories made first); returns its path.
  std::string write(const std::string& relative, const std::string& text) {
    const std::filesystem::path file = path(relative);
    std::filesystem::create_directories(file.parent_path());
    std::FILE* f = std::fopen(file.c_str(), "w");
    EXPECT_NE(f, nullptr) << file;
    if (f != nullptr) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
    return file.string();
  }

 private:
  std::string dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace curlretry::proxy::testing
