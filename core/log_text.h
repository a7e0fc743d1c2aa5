// One log line's text made safe to print: what the network or the program chose (a method, a
// host, a path, a header name, an error text) can never end the line, start a new one that
// looks like ours, or send the terminal an escape sequence.
#pragma once

#include <string>
#include <string_view>

namespace curlretry::core::log_text {

// `text` with every byte a terminal or a line-reader could act on written as an escape:
// \n \r \t as themselves, the backslash as \\ (so an escape in the output is always ours),
// other C0 controls, DEL and bytes that are not well-formed UTF-8 as \xHH, and the C1 controls
// U+0080..U+009F (CSI is U+009B) as \u00HH. Well-formed printable UTF-8 is kept as it is.
std::string escape(std::string_view text);

}  // namespace curlretry::core::log_text
