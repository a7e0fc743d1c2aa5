// Looking into an error body: marker substrings and JSON error codes. Bounded and
// allocation-light: bodies are untrusted and may be truncated JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace curlretry::core {

// The first marker (in list order) found in `body`, compared ASCII-case-insensitively; UTF-8
// markers such as "风控" match byte for byte.
std::optional<std::string_view> find_marker(std::string_view body, const std::vector<std::string>& markers);

// The scalar at dotted `path` ("code", "error.code") of a JSON object, as text: strings
// unescaped, numbers/true/false/null verbatim. nullopt when absent, not a scalar, or the JSON is
// malformed before reaching it. Depth is bounded.
std::optional<std::string> json_scalar_at(std::string_view body, std::string_view path);

// The string values of every member named `key`, at any depth (inside arrays too), in document
// order and at most `limit` of them: for envelopes that put a fact in a list, such as Google's
// error.details[].retryDelay. Depth is bounded as above.
std::vector<std::string> json_strings_named(std::string_view body, std::string_view key, std::size_t limit);

}  // namespace curlretry::core
