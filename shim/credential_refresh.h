// A rule's `auth:` command: run without a shell when the upstream says the credential is stale
// (401), its first stdout line becoming the new value of one request header. The value is kept
// for later requests of the process under the same rule until the next refusal. It is never
// logged, never written to the attempt log, and the program's own header list is never touched.
#pragma once

#include <optional>
#include <string>

#include "config/agent.h"

namespace curlretry::shim::credential {

// The process's refreshed value for `rule`, if any.
std::optional<std::string> cached(const std::string& rule);
void store(const std::string& rule, const std::string& value);
void forget(const std::string& rule);
// Cheap: whether anything was ever stored (new transfers look a rule up only then).
bool any_cached();

}  // namespace curlretry::shim::credential
