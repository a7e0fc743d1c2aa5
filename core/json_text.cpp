#include "core/json_text.h"

#include <cstring>

#include "core/utf8.h"

namespace curlretry::core::json_text {

Piece piece_at(std::string_view text, std::size_t i) noexcept {
  Piece p{{}, 0, 1};
  const auto c = static_cast<unsigned char>(text[i]);
  auto put = [&p](char b) { p.bytes[p.size++] = b; };
  if (c == '"' || c == '\\') {
    put('\\');
    put(static_cast<char>(c));
  } else if (c == '\n' || c == '\r' || c == '\t') {
    put('\\');
    put(c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
  } else if (c < 0x20 || c == 0x7f) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (const char b : {'\\', 'u', '0', '0'}) put(b);
    put(kHex[c >> 4]);
    put(kHex[c & 0xf]);
  } else if (c < 0x80) {
    put(static_cast<char>(c));
  } else if (const std::size_t len = utf8::sequence_length(text, i); len == 0) {
    for (const char b : {'\xEF', '\xBF', '\xBD'}) put(b);  // U+FFFD for this one byte
  } else {
    std::memcpy(p.bytes, text.data() + i, len);
    p.size = static_cast<std::uint8_t>(len);
    p.consumed = static_cast<std::uint8_t>(len);
  }
  return p;
}

void append_escaped(std::string& out, std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Piece p = piece_at(text, i);
    out.append(p.bytes, p.size);
    i += p.consumed;
  }
}

std::string quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  append_escaped(out, text);
  out += '"';
  return out;
}

}  // namespace curlretry::core::json_text
