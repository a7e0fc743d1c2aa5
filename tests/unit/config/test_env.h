// An injectable environment for config tests: no test reads the real process environment or the
// real /etc/curlretry/config.yaml.
#pragma once

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"

namespace curlretry::config::testing {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  bool secure = false;
  std::string home;  // Environment::home: empty = $HOME
  std::string system_file = "/nonexistent/curlretry-test/etc/config.yaml";

  // The returned Environment points into this FakeEnv: keep it alive while it is used.
  Environment env() const {
    Environment e;
    e.get = [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
    e.secure = secure;
    e.home = home;
    e.system_file = system_file;
    return e;
  }
};

inline LoadResult load_yaml(const std::string& yaml, const FakeEnv& env = {}) {
  return load_from_string(yaml, "test.yaml", env.env());
}

// The error a config that must not load gives (a test failure if it loads).
inline std::string error_of(const std::string& yaml) {
  const LoadResult r = load_yaml(yaml);
  EXPECT_FALSE(r.ok()) << "expected an error for:\n" << yaml;
  return r.error;
}

}  // namespace curlretry::config::testing
