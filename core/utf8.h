// UTF-8, once: the well-formedness check that JSON quoting and the config reader apply, and the
// encoder behind JSON's \uXXXX escapes. Strict as RFC 3629: no overlongs, no surrogates, nothing
// above U+10FFFF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace curlretry::core::utf8 {

// The length (1..4) of the well-formed sequence that starts at text[i], or 0. When 0 because
// the text ends inside an otherwise well-begun sequence, `truncated` (if given) is set.
std::size_t sequence_length(std::string_view text, std::size_t i, bool* truncated = nullptr);

// Appends code point `cp` (at most U+10FFFF) encoded as UTF-8.
void append(std::string& out, std::uint32_t cp);

}  // namespace curlretry::core::utf8
