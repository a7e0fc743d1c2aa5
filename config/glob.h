// Shell-style globs for rule matching: `*` (any run of bytes, '/' included, so "/api/*" covers
// every path below /api/), `?` (one byte), `[abc]`, `[a-z]`, `[!x]` / `[^x]`, and `\` to take the
// next character literally. Patterns are validated once, at load time, so a typo is a config
// error instead of a rule that silently never matches.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace curlretry::config {

// Why `pattern` is not a valid glob ("unclosed '[' at offset 4"), or nullopt when it is.
std::optional<std::string> glob_error(std::string_view pattern);

// Whether `text` matches the whole of `pattern`. With `fold_case`, ASCII letters compare
// case-insensitively (hosts). An invalid pattern matches nothing.
bool glob_match(std::string_view pattern, std::string_view text, bool fold_case);

}  // namespace curlretry::config
