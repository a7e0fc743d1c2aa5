#include "core/request_rewrite.h"

#include <cstddef>

namespace curlretry::core {
namespace {

constexpr int kMaxDepth = 512;

class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {}

  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool at_end() {
    space();
    return i_ == t_.size();
  }
  std::size_t pos() const { return i_; }
  char peek() {
    space();
    return i_ < t_.size() ? t_[i_] : '\0';
  }

  // A string starting at the current position; the raw text between the quotes.
  std::optional<std::string_view> string() {
    space();
    if (i_ >= t_.size() || t_[i_] != '"') return std::nullopt;
    const std::size_t start = ++i_;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\') {
        i_ += 2;
        continue;
      }
      if (c == '"') return t_.substr(start, i_++ - start);
      if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;
      ++i_;
    }
    return std::nullopt;
  }

  // Any JSON value, skipped.
  bool value(int depth) {
    if (depth > kMaxDepth) return false;
    const char c = peek();
    if (c == '"') return string().has_value();
    if (c == '{') {
      ++i_;
      if (eat('}')) return true;
      do {
        if (!string() || !eat(':') || !value(depth + 1)) return false;
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      ++i_;
      if (eat(']')) return true;
      do {
        if (!value(depth + 1)) return false;
      } while (eat(','));
      return eat(']');
    }
    const std::size_t start = i_;
    while (i_ < t_.size()) {
      const char d = t_[i_];
      const bool literal = (d >= '0' && d <= '9') || (d >= 'a' && d <= 'z') || d == '-' || d == '+' || d == '.' ||
                           d == 'E';
      if (!literal) break;
      ++i_;
    }
    return i_ > start;
  }

 private:
  std::string_view t_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<ModelSwap> replace_model(std::string_view body, std::string_view model) {
  Scanner s(body);
  if (!s.eat('{')) return std::nullopt;
  std::optional<std::pair<std::size_t, std::size_t>> span;  // the model value's raw text
  std::string_view old;
  if (!s.eat('}')) {
    do {
      auto key = s.string();
      if (!key || !s.eat(':')) return std::nullopt;
      if (*key == "model" && !span && s.peek() == '"') {
        const std::size_t open = s.pos();
        auto value = s.string();
        if (!value) return std::nullopt;
        span = std::make_pair(open + 1, value->size());
        old = *value;
      } else if (!s.value(1)) {
        return std::nullopt;
      }
    } while (s.eat(','));
    if (!s.eat('}')) return std::nullopt;
  }
  if (!s.at_end() || !span) return std::nullopt;
  ModelSwap swap;
  swap.old_model = std::string(old);
  swap.body.reserve(body.size() - span->second + model.size());
  swap.body.append(body.substr(0, span->first));
  swap.body.append(model);
  swap.body.append(body.substr(span->first + span->second));
  return swap;
}

std::optional<std::string> replace_origin(std::string_view url, std::string_view base) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  const auto rest = url.find_first_of("/?#", scheme + 3);
  std::string out(base);
  if (rest == std::string_view::npos) return out;
  out.append(url.substr(rest));
  return out;
}

}  // namespace curlretry::core
