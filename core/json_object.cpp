#include "core/json_object.h"

#include <charconv>
#include <system_error>

#include "core/ascii.h"
#include "core/json_cursor.h"

namespace curlretry::core::json {
namespace {

// Our own lines are flat; a nested value (a future field) is skipped within this bound.
constexpr int kMaxDepth = 64;

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s), c_(s, kMaxDepth) {}

  std::optional<Object> read() {
    Object out;
    c_.skip_space();
    if (!c_.eat('{')) return std::nullopt;
    c_.skip_space();
    if (c_.eat('}')) return finish(std::move(out));
    for (;;) {
      c_.skip_space();
      std::string key;
      if (!c_.string(&key)) return std::nullopt;
      c_.skip_space();
      if (!c_.eat(':')) return std::nullopt;
      c_.skip_space();
      Value value;
      if (!this->value(value)) return std::nullopt;
      out[key] = std::move(value);
      c_.skip_space();
      if (c_.eat(',')) continue;
      if (c_.eat('}')) return finish(std::move(out));
      return std::nullopt;
    }
  }

 private:
  std::optional<Object> finish(Object out) {
    c_.skip_space();
    if (!c_.at_end()) return std::nullopt;
    return out;
  }
  bool value(Value& v) {
    if (c_.at_end()) return false;
    const char c = c_.peek();
    if (c == '"') {
      v.kind = Value::Kind::string;
      return c_.string(&v.text);
    }
    if (c == '-' || ascii::is_digit(c)) {
      const std::size_t start = c_.pos();
      if (!c_.number()) return false;
      // The grammar is checked; from_chars reads exactly that text, whatever the locale (strtod
      // would read "1.5" as 1 under a locale whose decimal point is a comma).
      const std::string_view text = s_.substr(start, c_.pos() - start);
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v.number);
      if (error != std::errc{} || end != text.data() + text.size()) return false;
      v.kind = Value::Kind::number;
      return true;
    }
    return c_.skip_value(1);  // true, false, null, or a nested value: checked and skipped
  }

  std::string_view s_;
  JsonCursor c_;
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
