#include "core/log_text.h"

#include "core/utf8.h"

namespace curlretry::core::log_text {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, const char* prefix, unsigned value) {
  out += prefix;
  out += kHex[(value >> 4) & 15];
  out += kHex[value & 15];
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += '\\';
      out += c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
      ++i;
      continue;
    }
    const std::size_t length = c >= 0x80 ? utf8::sequence_length(text, i) : 0;
    if (length == 0) {  // a control byte, DEL, or a byte of no well-formed sequence
      append_hex(out, "\\x", c);
      ++i;
      continue;
    }
    // U+0080..U+009F are two bytes, C2 80..C2 9F: terminals may take them as controls.
    if (length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      append_hex(out, "\\u00", static_cast<unsigned char>(text[i + 1]));
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace curlretry::core::log_text
