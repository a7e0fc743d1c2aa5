// Several config files read as one: a repeated --config (a ':'-separated CURLRETRY_CONFIG) and
// `include: [FILE...]` inside a file. Included files apply before the file that includes them,
// files in the order given. Rules concatenate in that order (the first match still wins); every
// other map (defaults, settings, ...) merges key by key with the later file winning; a list or a
// scalar is replaced whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace curlretry::config {

// Each of `paths` (with its includes, relative to the including file) read, checked on its own,
// then combined and loaded. Errors name FILE:LINE:COL: of the include item for a missing or
// cyclic include. A top-level file that cannot be read is reported as `named_by` would say it
// ("CURLRETRY_CONFIG=PATH: ..."). Never throws. The environment is not applied.
LoadResult load_files(const std::vector<std::string>& paths, const std::string& named_by);

// "a.yaml:b.yaml" -> {"a.yaml", "b.yaml"}; empty parts are dropped.
std::vector<std::string> split_config_list(std::string_view list);

}  // namespace curlretry::config
