// JSON string escaping, once, for every JSON curlretry writes: the attempt log, `explain
// --json`, `stats --json`, `proxy ca --json`, the proxy's and the flaky upstream's error bodies.
// The rules (RFC 8259 section 7, plus two choices of ours):
//   - '"' and '\' as \" and \\; LF, CR, TAB as \n \r \t; every other C0 control and DEL as
//     \u00xx (lower-case hex). DEL is not required by the RFC, but a terminal acts on it.
//   - Well-formed UTF-8 (RFC 3629, core/utf8.h) is kept as it is, C1 controls included: the
//     output is UTF-8, and a reader that prints it must escape for its terminal itself.
//   - Each byte that does not start a well-formed sequence becomes U+FFFD, written as its UTF-8
//     bytes (EF BF BD), so the output always parses and is never longer than 3x plus quotes.
// Nothing here allocates except quote()/append_escaped(); piece_at() is for callers that write
// into a fixed buffer (the shim's attempt log) and must cut between characters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace curlretry::core::json_text {

// What one character of `text` at byte `i` becomes inside a JSON string.
struct Piece {
  char bytes[6];           // at most "\u001f" (6) or a 4-byte UTF-8 sequence
  std::uint8_t size;       // bytes used in `bytes`
  std::uint8_t consumed;   // input bytes it stands for (1..4)
};

// `i` must be < text.size().
Piece piece_at(std::string_view text, std::size_t i) noexcept;

// Appends `text` escaped, without quotes.
void append_escaped(std::string& out, std::string_view text);

// `text` as a JSON string literal, quotes included.
std::string quote(std::string_view text);

}  // namespace curlretry::core::json_text
