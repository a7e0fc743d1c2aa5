// A cursor over one JSON text (RFC 8259): the one JSON reader in core/. The error-body scan
// (body_scan), the attempt-log reader (json_object) and the request-body model swap
// (request_rewrite) each walk their own shape with it; the grammar (strings and their escapes,
// numbers, literals, skipping a nested value) is defined here once.
// Bounded for untrusted text: no read past the end, nesting past the owner's `max_depth` refused
// (skip_value recurses once per level), nothing allocated but the unescaped strings a caller asks
// for. Whitespace is skipped only where the caller says (skip_space), so a caller that needs a
// value's exact span (request_rewrite) has it from pos().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace curlretry::core {

class JsonCursor {
 public:
  JsonCursor(std::string_view text, int max_depth) : text_(text), max_depth_(max_depth) {}

  std::size_t pos() const { return pos_; }
  bool at_end() const { return pos_ >= text_.size(); }
  // The byte at the cursor; only when !at_end().
  char peek() const { return text_[pos_]; }
  bool eat(char c) {
    if (at_end() || peek() != c) return false;
    ++pos_;
    return true;
  }
  // RFC 8259's insignificant whitespace: space, tab, LF, CR.
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }
  // A UTF-8 byte order mark at the cursor (RFC 8259 lets a parser ignore one).
  void skip_bom() {
    if (text_.substr(pos_, 3) == "\xEF\xBB\xBF") pos_ += 3;
  }

  // A string at the cursor, unescaped into `*out` (cleared first) unless `out` is null. Strict:
  // a raw control byte, an unknown escape, a short \u or a missing closing quote is false. An
  // escaped surrogate that is not half of a pair is legal JSON but no character: it becomes
  // U+FFFD (and an escape after an unpaired high half is read on its own).
  bool string(std::string* out);
  // RFC 8259's number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number();
  // Exactly `word` ("true", "false", "null").
  bool literal(std::string_view word);

  // Told each member of every object skip_value passes over, with the cursor just after the
  // member's ':'. It says whether it read the member's value itself (and whether that value was
  // well formed: a broken one ends the walk as any other error does).
  enum class Take { no, read, broken };
  class MemberHook {
   public:
    virtual Take take(JsonCursor& cursor, const std::string& key) = 0;

   protected:
    ~MemberHook() = default;
  };

  // The object at the cursor (whitespace before it skipped), member by member: `member(key)` is
  // called with the cursor at the member's value (whitespace skipped), reads or skips it, and says
  // whether it was well formed. False when it said not, or the object is malformed or not there.
  template <class Member>
  bool object(Member&& member) {
    skip_space();
    if (!eat('{')) return false;
    skip_space();
    if (eat('}')) return true;
    std::string key;
    do {
      skip_space();
      if (!string(&key)) return false;
      skip_space();
      if (!eat(':')) return false;
      skip_space();
      if (!member(static_cast<const std::string&>(key))) return false;
      skip_space();
    } while (eat(','));
    return eat('}');
  }

  // Any value at the cursor (whitespace before it skipped), checked for shape and skipped.
  // `depth` is how many containers enclose it; one nested deeper than `max_depth` is refused.
  bool skip_value(int depth, MemberHook* hook = nullptr);

 private:
  bool skip_container(char close, int depth, bool object, MemberHook* hook);
  std::optional<std::uint32_t> code_point();
  std::optional<std::uint32_t> hex4();
  bool digits();

  std::string_view text_;
  std::size_t pos_ = 0;
  int max_depth_;
  std::string key_;  // a hook's member names, one buffer reused for the whole text
};

}  // namespace curlretry::core
