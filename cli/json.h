// Just enough JSON output for `explain --json`: one flat object, strings always valid UTF-8.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace curlretry::cli {

// `text` as a JSON string literal, quotes included. Invalid UTF-8 (a code taken from an
// untrusted body) becomes U+FFFD so the output always parses.
std::string json_quote(std::string_view text);

// `items` as a JSON array of strings, `separator` between them ("," or ", ").
std::string json_list(const std::vector<std::string>& items, std::string_view separator = ",");

}  // namespace curlretry::cli
