// Loading the config for a command that needs it: warnings and the error go to stderr the same
// way for every command.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"

namespace curlretry::cli {

// The config of the usual search (`path` first when given), its warnings printed; on an error,
// the error printed and nullopt.
std::optional<config::Config> load_config_or_say_why(const std::optional<std::string>& path);

}  // namespace curlretry::cli
