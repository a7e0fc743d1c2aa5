#include "core/json_cursor.h"

#include "core/ascii.h"
#include "core/utf8.h"

namespace curlretry::core {

bool JsonCursor::string(std::string* out) {
  if (!eat('"')) return false;
  if (out) out->clear();
  while (!at_end()) {
    const char c = text_[pos_++];
    if (c == '"') return true;
    if (static_cast<unsigned char>(c) < 0x20) return false;
    if (c != '\\') {
      if (out) *out += c;
      continue;
    }
    if (at_end()) return false;
    const char e = text_[pos_++];
    char plain = 0;
    switch (e) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': {
        const auto cp = code_point();
        if (!cp) return false;
        if (out) utf8::append(*out, *cp);
        continue;
      }
      default: return false;
    }
    if (out) *out += plain;
  }
  return false;  // unterminated (a body cut short ends here)
}

// After "\u": one code point, joining a surrogate pair.
std::optional<std::uint32_t> JsonCursor::code_point() {
  const auto high = hex4();
  if (!high) return std::nullopt;
  if (*high < 0xD800 || *high > 0xDFFF) return *high;
  if (*high <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
    const std::size_t mark = pos_;
    pos_ += 2;
    const auto low = hex4();
    if (low && *low >= 0xDC00 && *low <= 0xDFFF) return 0x10000 + ((*high - 0xD800) << 10) + (*low - 0xDC00);
    pos_ = mark;  // not a pair: the next escape is read on its own
  }
  return 0xFFFD;
}

std::optional<std::uint32_t> JsonCursor::hex4() {
  if (text_.size() - pos_ < 4) return std::nullopt;
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    const int digit = ascii::hex_digit(text_[pos_++]);
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<std::uint32_t>(digit);
  }
  return value;
}

bool JsonCursor::number() {
  eat('-');
  if (eat('0')) {
    // no leading zeros
  } else if (!digits()) {
    return false;
  }
  if (eat('.') && !digits()) return false;
  if (eat('e') || eat('E')) {
    if (!eat('+')) eat('-');
    if (!digits()) return false;
  }
  return true;
}

bool JsonCursor::digits() {
  const std::size_t start = pos_;
  while (!at_end() && ascii::is_digit(peek())) ++pos_;
  return pos_ > start;
}

bool JsonCursor::literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return false;
  pos_ += word.size();
  return true;
}

bool JsonCursor::skip_value(int depth, MemberHook* hook) {
  skip_space();
  if (at_end()) return false;
  switch (peek()) {
    case '"': return string(nullptr);
    case '{': return skip_container('}', depth, true, hook);
    case '[': return skip_container(']', depth, false, hook);
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    default: return number();
  }
}

bool JsonCursor::skip_container(char close, int depth, bool object, MemberHook* hook) {
  if (depth + 1 > max_depth_) return false;
  ++pos_;
  skip_space();
  if (eat(close)) return true;
  while (true) {
    skip_space();
    Take taken = Take::no;
    if (object) {
      if (!string(hook ? &key_ : nullptr)) return false;
      skip_space();
      if (!eat(':')) return false;
      if (hook) taken = hook->take(*this, key_);
    }
    if (taken == Take::broken) return false;
    if (taken == Take::no && !skip_value(depth + 1, hook)) return false;
    skip_space();
    if (eat(close)) return true;
    if (!eat(',')) return false;
  }
}

}  // namespace curlretry::core
