// The CURLRETRY_* / BILI_REPLAY_* variables with arbitrary values (NUL-separated in the input,
// in the order below), over a small valid file: every value ends in a config or one error naming
// the variable, never a crash. The env is the one input every user of the preload controls.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "config/config.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry;

namespace {

constexpr std::array<const char*, 10> kVariables = {
    "CURLRETRY_MAX_ATTEMPTS", "CURLRETRY_BASE_MS",         "CURLRETRY_MAX_DELAY_MS", "CURLRETRY_LOG",
    "CURLRETRY_DISABLE",      "BILI_REPLAY_RETRY_MAX",     "BILI_REPLAY_RETRY_BASE_MS",
    "CURLRETRY_LOG_FILE",     "CURLRETRY_EVENTS",          "CURLRETRY_LIBRARY"};

constexpr std::string_view kFile =
    "version: 1\ndefaults: {max_attempts: 4, backoff: {base_ms: 10}}\n"
    "rules:\n  - {name: glm, match: {host: \"*.bigmodel.cn\"}, max_attempts: 2}\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> vars;
  for (const char* name : kVariables) {
    if (rest.empty()) break;
    const std::size_t nul = rest.find('\0');
    const std::string_view value = rest.substr(0, nul);
    if (!value.empty() && value != "-") vars[name] = std::string(value);  // "-" leaves it unset
    rest = nul == std::string_view::npos ? std::string_view{} : rest.substr(nul + 1);
  }
  config::Environment env;
  env.get = [&vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  env.system_file = "/nonexistent/curlretry-fuzz/config.yaml";

  const config::LoadResult r = config::load_from_string(kFile, "fuzz.yaml", env);
  if (!r.ok()) {
    FUZZ_CHECK(!r.error.empty());
    // The error names a variable and never echoes raw control bytes into a terminal.
    FUZZ_CHECK(r.error.rfind("CURLRETRY_", 0) == 0 || r.error.rfind("BILI_REPLAY_", 0) == 0);
    for (unsigned char c : r.error) FUZZ_CHECK(c >= 0x20 && c != 0x7f);
    return 0;
  }
  for (const config::Rule& rule : r.config->rules) {
    FUZZ_CHECK(rule.policy.max_attempts == -1 || rule.policy.max_attempts >= 1);
    FUZZ_CHECK(rule.policy.backoff.base.count() >= 0);
  }
  env.secure = true;  // AT_SECURE: none of it may matter
  const config::LoadResult s = config::load_from_string(kFile, "fuzz.yaml", env);
  FUZZ_CHECK(s.ok() && s.warnings.empty());
  FUZZ_CHECK(s.config->defaults.max_attempts == 4 && s.config->rules.at(0).policy.max_attempts == 2);
  FUZZ_CHECK(s.config->settings.log_file.empty() && !s.config->settings.disabled);
  return 0;
}
