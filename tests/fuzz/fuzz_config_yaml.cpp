// The YAML config loader on arbitrary text: config::load_from_string, exactly what the shim and
// `curlretry check` run on a user's file. It must end in a config or in one error sentence that
// names the file, never crash, hang, throw or allocate without bound. A loaded config is then
// asked for the policy of a few requests (glob matching of every rule).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  config::Environment env;
  env.get = [](const char*) -> const char* { return nullptr; };
  env.system_file = "/nonexistent/curlretry-fuzz/config.yaml";

  const config::LoadResult r = config::load_from_string(text, "fuzz.yaml", env);
  if (!r.ok()) {
    FUZZ_CHECK(!r.error.empty());
    FUZZ_CHECK(r.error.rfind("fuzz.yaml", 0) == 0);
    return 0;
  }
  const config::Config& c = *r.config;
  FUZZ_CHECK(c.defaults.max_attempts == -1 || c.defaults.max_attempts >= 1);
  FUZZ_CHECK(c.defaults.backoff.base.count() >= 0 && c.defaults.backoff.max.count() >= 0);
  for (const config::Rule& rule : c.rules) {
    FUZZ_CHECK(rule.policy.max_attempts == -1 || rule.policy.max_attempts >= 1);
    FUZZ_CHECK(rule.policy.body_window <= 1024 * 1024);
    // Each rule's own globs, matched against themselves and against ordinary requests.
    (void)c.match(rule.match.method, rule.match.host, rule.match.path);
  }
  (void)c.policy_for("POST", "open.bigmodel.cn", "/api/paas/v4/chat/completions");
  (void)c.policy_for("GET", "api.z.ai", "/");
  (void)c.policy_for("", "", "");
  return 0;
}
