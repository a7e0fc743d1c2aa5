// Which config file a process reads, and reading it safely: bounded size, no exceptions.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "config/env.h"

namespace curlretry::config {

struct Candidate {
  std::string path;
  // Who named the file ("--config", "CURLRETRY_CONFIG"); empty for a fallback location. A named
  // file must exist; a fallback that does not is skipped.
  std::string named_by;
};

// In order: `explicit_path`, $CURLRETRY_CONFIG, $XDG_CONFIG_HOME/curlretry/config.yaml,
// ~/.config/curlretry/config.yaml, the system file. A named file ends the list (it must be the
// one read). A secure-execution environment gets the system file only.
std::vector<Candidate> config_candidates(const Environment& env, const EnvOverrides& overrides,
                                         const std::optional<std::string>& explicit_path);

enum class ReadStatus : unsigned char { ok, missing, failed };

// Reads at most kMaxDocumentBytes (a larger file fails), and only a file no other user can change
// (config/file_trust.h). `error` says why on failed/missing.
ReadStatus read_config_file(const std::string& path, std::string& content, std::string& error);

}  // namespace curlretry::config
