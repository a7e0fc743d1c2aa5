#include "core/json_object.h"

#include <cstdlib>

#include "core/utf8.h"

namespace curlretry::core::json {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  std::optional<Object> read() {
    Object out;
    ws();
    if (!eat('{')) return std::nullopt;
    ws();
    if (eat('}')) return finish(std::move(out));
    for (;;) {
      ws();
      std::string key;
      if (!string(key)) return std::nullopt;
      ws();
      if (!eat(':')) return std::nullopt;
      ws();
      Value value;
      if (!this->value(value)) return std::nullopt;
      out[key] = std::move(value);
      ws();
      if (eat(',')) continue;
      if (eat('}')) return finish(std::move(out));
      return std::nullopt;
    }
  }

 private:
  std::optional<Object> finish(Object out) {
    ws();
    if (i_ != s_.size()) return std::nullopt;
    return out;
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool hex4(unsigned& v) {
    if (i_ + 4 > s_.size()) return false;
    v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else return false;
    }
    return true;
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF && i_ + 6 <= s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            i_ += 2;
            unsigned low = 0;
            if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;
          }
          utf8::append(out, cp);
          break;
        }
        default: return false;
      }
    }
    return false;
  }
  bool value(Value& v) {
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '"') {
      v.kind = Value::Kind::string;
      return string(v.text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const std::size_t start = i_;
      while (i_ < s_.size() && std::string_view("+-0123456789.eE").find(s_[i_]) != std::string_view::npos) ++i_;
      const std::string text(s_.substr(start, i_ - start));
      char* end = nullptr;
      v.number = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size()) return false;
      v.kind = Value::Kind::number;
      return true;
    }
    for (std::string_view word : {"true", "false", "null"}) {
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        return true;
      }
    }
    if (c == '{' || c == '[') return skip_nested();
    return false;
  }
  bool skip_nested() {
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        std::string ignored;
        if (!string(ignored)) return false;
        continue;
      }
      ++i_;
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return true;
      }
    }
    return false;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<Object> read_object(std::string_view text) { return Reader(text).read(); }

const std::string* string_member(const Object& object, std::string_view name) {
  const auto it = object.find(std::string(name));
  return it != object.end() && it->second.kind == Value::Kind::string ? &it->second.text : nullptr;
}

std::optional<double> number_member(const Object& object, std::string_view name) {
  const auto it = object.find(std::string(name));
  if (it == object.end() || it->second.kind != Value::Kind::number) return std::nullopt;
  return it->second.number;
}

}  // namespace curlretry::core::json
