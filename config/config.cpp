// Entry points of config.h: finding and loading the file, applying env, matching rules.
#include "config/config.h"

#include <sys/auxv.h>

#include <cstdlib>
#include <exception>
#include <new>

#include "config/env.h"
#include "config/file_search.h"
#include "config/glob.h"
#include "config/include_merge.h"
#include "config/load_error.h"
#include "config/persistent.h"
#include "config/yaml_loader.h"
#include "core/ascii.h"

namespace curlretry::config {
namespace {

// Env is read first so that a bad variable is reported even when the file is fine, and the
// file is parsed next; env is applied last because it wins.
LoadResult finish(LoadResult parsed, const EnvReadResult& env) {
  LoadResult result = std::move(parsed);
  result.warnings.insert(result.warnings.begin(), env.warnings.begin(), env.warnings.end());
  if (!result.ok()) return result;
  apply_env(env.overrides, *result.config);
  apply_persistent(*result.config);
  return result;
}

LoadResult failure(std::string error, std::vector<std::string> warnings = {}) {
  LoadResult result;
  result.error = std::move(error);
  result.warnings = std::move(warnings);
  return result;
}

}  // namespace

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::off: return "off";
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "info";
}

const Rule* Config::match(std::string_view method, std::string_view host, std::string_view path,
                          const RequestHeaders* headers) const {
  // "api.z.ai." is the same host as "api.z.ai".
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (path.empty()) path = "/";
  for (const Rule& rule : rules) {
    if (!rule.match.method.empty() && !core::ascii::iequals(rule.match.method, method)) continue;
    if (!rule.match.host.empty() && !glob_match(rule.match.host, host, true)) continue;
    if (!rule.match.path.empty() && !glob_match(rule.match.path, path, false)) continue;
    if (!rule.match.headers.empty() && (headers == nullptr || !headers_match(rule.match.headers, *headers))) continue;
    return &rule;
  }
  return nullptr;
}

const core::Policy& Config::policy_for(std::string_view method, std::string_view host, std::string_view path) const {
  const Rule* rule = match(method, host, path);
  return rule ? rule->policy : defaults;
}

Environment Environment::process() {
  Environment env;
  env.get = [](const char* name) -> const char* { return std::getenv(name); };
  env.secure = ::getauxval(AT_SECURE) != 0;
  return env;
}

LoadResult load_from_string(std::string_view yaml, std::string_view name, const Environment& env) {
  try {
    EnvReadResult from_env = read_env(env);
    if (!from_env.error.empty()) return failure(from_env.error, from_env.warnings);
    return finish(parse_config(yaml, name), from_env);
  } catch (...) {
    return failure(current_load_error(std::string(name) + ": "));
  }
}

LoadResult load(const Environment& env, const std::optional<std::string>& explicit_path) {
  try {
    EnvReadResult from_env = read_env(env);
    if (!from_env.error.empty()) return failure(from_env.error, from_env.warnings);

    for (const Candidate& candidate : config_candidates(env, from_env.overrides, explicit_path)) {
      // A named file (or ':'-separated list) must be there; a fallback location may not be.
      if (!candidate.named_by.empty()) {
        return finish(load_files(split_config_list(candidate.path), candidate.named_by), from_env);
      }
      std::string content, why;
      switch (read_config_file(candidate.path, content, why)) {
        case ReadStatus::missing:
          continue;
        case ReadStatus::failed:
          return failure(candidate.path + ": cannot read the config: " + why, from_env.warnings);
        case ReadStatus::ok:
          return finish(load_files({candidate.path}, ""), from_env);
      }
    }
    LoadResult builtin;
    builtin.config = builtin_config();
    return finish(std::move(builtin), from_env);
  } catch (...) {
    return failure(current_load_error(""));
  }
}

}  // namespace curlretry::config
