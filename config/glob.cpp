#include "config/glob.h"

#include <cstddef>

#include "core/ascii.h"

namespace curlretry::config {
namespace {

unsigned char fold(unsigned char c, bool fold_case) {
  return fold_case ? static_cast<unsigned char>(core::ascii::lower(static_cast<char>(c))) : c;
}

// Parses the bracket expression starting at pattern[i] == '['. On success returns the index just
// past the closing ']' and, when `c` is given, whether `c` is in the set. On failure returns npos
// and sets `error`.
std::size_t parse_class(std::string_view pattern, std::size_t i, const unsigned char* c, bool fold_case,
                        bool& matched, std::string* error) {
  const std::size_t open = i;
  ++i;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool in_set = false;
  bool first = true;
  for (;;) {
    if (i >= pattern.size()) {
      if (error) *error = "unclosed '[' at offset " + std::to_string(open);
      return std::string_view::npos;
    }
    // A ']' right after '[' or '[!' is a literal, as in fnmatch: "[]]" matches "]".
    if (pattern[i] == ']' && !first) break;
    first = false;
    unsigned char lo = static_cast<unsigned char>(pattern[i]);
    if (lo == '\\') {
      if (++i >= pattern.size()) {
        if (error) *error = "unclosed '[' at offset " + std::to_string(open);
        return std::string_view::npos;
      }
      lo = static_cast<unsigned char>(pattern[i]);
    }
    ++i;
    unsigned char hi = lo;
    if (i + 1 < pattern.size() && pattern[i] == '-' && pattern[i + 1] != ']') {
      std::size_t j = i + 1;
      if (pattern[j] == '\\') {
        if (++j >= pattern.size()) {
          if (error) *error = "unclosed '[' at offset " + std::to_string(open);
          return std::string_view::npos;
        }
      }
      hi = static_cast<unsigned char>(pattern[j]);
      if (hi < lo) {
        if (error) {
          *error = std::string("reversed range '") + static_cast<char>(lo) + "-" + static_cast<char>(hi) +
                   "' at offset " + std::to_string(open);
        }
        return std::string_view::npos;
      }
      i = j + 1;
    }
    if (c) {
      const unsigned char x = fold(*c, fold_case);
      for (unsigned v = lo; v <= hi; ++v) {
        if (fold(static_cast<unsigned char>(v), fold_case) == x) {
          in_set = true;
          break;
        }
      }
    }
  }
  matched = in_set != negate;
  return i + 1;
}

}  // namespace

std::optional<std::string> glob_error(std::string_view pattern) {
  for (std::size_t i = 0; i < pattern.size();) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 >= pattern.size()) return "trailing '\\' escapes nothing";
      i += 2;
    } else if (c == '[') {
      bool unused = false;
      std::string error;
      const std::size_t next = parse_class(pattern, i, nullptr, false, unused, &error);
      if (next == std::string_view::npos) return error;
      i = next;
    } else {
      ++i;
    }
  }
  return std::nullopt;
}

bool glob_match(std::string_view pattern, std::string_view text, bool fold_case) {
  // Iterative matching with one backtrack point (the last '*'): linear in practice, and never
  // exponential, whatever the pattern.
  std::size_t p = 0, t = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    bool advanced = false;
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      const unsigned char tc = static_cast<unsigned char>(text[t]);
      if (pc == '?') {
        ++p;
        advanced = true;
      } else if (pc == '[') {
        bool matched = false;
        const std::size_t next = parse_class(pattern, p, &tc, fold_case, matched, nullptr);
        if (next == std::string_view::npos) return false;
        if (matched) {
          p = next;
          advanced = true;
        }
      } else {
        std::size_t lit = p;
        if (pc == '\\') {
          if (p + 1 >= pattern.size()) return false;
          lit = p + 1;
        }
        if (fold(static_cast<unsigned char>(pattern[lit]), fold_case) == fold(tc, fold_case)) {
          p = lit + 1;
          advanced = true;
        }
      }
    }
    if (advanced) {
      ++t;
    } else if (star_p != std::string_view::npos) {
      p = star_p;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace curlretry::config
