// Just enough JSON output for the CLI's --json modes. The escaping rules are core/json_text.h's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/json_text.h"

namespace curlretry::cli {

// `text` as a JSON string literal, quotes included (core::json_text::quote).
inline std::string json_quote(std::string_view text) { return core::json_text::quote(text); }

// `items` as a JSON array of strings, `separator` between them ("," or ", ").
std::string json_list(const std::vector<std::string>& items, std::string_view separator = ",");

}  // namespace curlretry::cli
