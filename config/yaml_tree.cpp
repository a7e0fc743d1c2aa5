#include "config/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <exception>
#include <new>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "core/utf8.h"

namespace curlretry::config {
namespace {

// yaml-cpp counts columns in bytes; editors count characters. Converts a mark to the
// 1-based line and character column a user finds in an editor.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
  }

  Position operator()(const YAML::Mark& mark) const {
    if (mark.is_null() || mark.line < 0 || mark.column < 0) return {};
    const auto line = static_cast<std::size_t>(mark.line);
    if (line >= starts_.size()) return {mark.line + 1, mark.column + 1};
    std::size_t start = starts_[line];
    if (line == 0 && text_.substr(0, 3) == "\xEF\xBB\xBF") start = 3;  // yaml-cpp skips a BOM
    const std::size_t end = std::min(text_.size(), start + static_cast<std::size_t>(mark.column));
    // Marks arrive in file order, so counting on from the previous one keeps a long line with many
    // nodes (a 100000-item flow list) linear instead of quadratic.
    if (line != cache_line_ || end < cache_end_) {
      cache_line_ = line;
      cache_end_ = start;
      cache_chars_ = 0;
    }
    for (std::size_t i = cache_end_; i < end; ++i) {
      if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++cache_chars_;
    }
    cache_end_ = end;
    return {mark.line + 1, cache_chars_ + 1};
  }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
  mutable std::size_t cache_line_ = static_cast<std::size_t>(-1);
  mutable std::size_t cache_end_ = 0;
  mutable int cache_chars_ = 0;
};

// Thrown from inside the event handler to stop yaml-cpp at the first thing we refuse.
struct Refused {
  YamlError error;
};

// The first byte that is not well-formed UTF-8 (overlongs, surrogates and > U+10FFFF included),
// or a NUL, which yaml-cpp would silently treat as the end of input.
std::optional<YamlError> check_encoding(std::string_view text) {
  int line = 1, column = 1;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  if (n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) i = 3;  // UTF-8 BOM is fine
  while (i < n) {
    const unsigned char c = s[i];
    if (c == 0) return YamlError{{line, column}, true, "the file contains a NUL byte"};
    bool truncated = false;
    const std::size_t len = core::utf8::sequence_length(text, i, &truncated);
    if (len == 0) {
      const char* what =
          truncated ? "invalid UTF-8 (truncated sequence)" : "invalid UTF-8 (the file must be UTF-8 text)";
      return YamlError{{line, column}, true, what};
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += len;
  }
  return std::nullopt;
}

class TreeBuilder final : public YAML::EventHandler {
 public:
  TreeBuilder(const LineIndex& to_position, std::string_view text) : to_position(to_position), text_(text) {}

  YamlNode root;
  bool have_root = false;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_anchor(mark, anchor);
    YamlNode node;
    node.kind = YamlNode::Kind::null;
    node.at = to_position(mark);
    add(std::move(node));
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw Refused{{to_position(mark), true, "aliases (*name) are not supported in curlretry config"}};
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    YamlNode node;
    node.kind = YamlNode::Kind::scalar;
    node.at = to_position(mark);
    node.text = value;
    node.quoted = tag == "!";  // yaml-cpp tags plain scalars "?" and quoted ones "!"
    if (node.quoted) check_closed_quote(mark);
    add(std::move(node));
  }

  // yaml-cpp 0.7 accepts a quoted scalar left open at the end of the file and swallows the rest
  // of the document into it (`name: "glm` would hide every key after it).
  void check_closed_quote(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text_.size()) return;
    const char quote = text_[static_cast<std::size_t>(mark.pos)];
    if (quote != '"' && quote != '\'') return;
    for (std::size_t i = static_cast<std::size_t>(mark.pos) + 1; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;  // '' is an escaped quote inside '...'
        } else {
          return;
        }
      }
    }
    throw Refused{{to_position(mark), true, "a quoted string is never closed"}};
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, tag, anchor, YamlNode::Kind::sequence);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, tag, anchor, YamlNode::Kind::map);
  }
  void OnMapEnd() override { close(); }

  void OnAnchor(const YAML::Mark& mark, const std::string&) override { refuse_anchor(mark); }

 private:
  struct Frame {
    YamlNode node;
    bool have_key = false;
    YamlNode key;
    std::unordered_map<std::string, Position> seen;  // map keys -> where first seen
  };
  std::vector<Frame> stack_;
  const LineIndex& to_position;
  std::string_view text_;  // the document, for what yaml-cpp does not check

  void refuse_anchor(const YAML::Mark& mark) {
    throw Refused{{to_position(mark), true, "anchors (&name) are not supported in curlretry config"}};
  }
  void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) refuse_anchor(mark);
  }
  void check_tag(const YAML::Mark& mark, const std::string& tag) {
    if (!tag.empty() && tag != "?" && tag != "!") {
      throw Refused{{to_position(mark), true, "YAML tags (" + tag + ") are not supported in curlretry config"}};
    }
  }

  // The dotted key of a child about to be added to the top frame: "defaults.backoff".
  std::string path_to(const std::string& last) const {
    std::string out;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.node.kind == YamlNode::Kind::sequence) {
        out += "[" + std::to_string(f.node.items.size()) + "]";
      } else {
        out += (out.empty() ? "" : ".") + f.key.text;
      }
    }
    return out.empty() ? last : out + "." + last;
  }

  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, YamlNode::Kind kind) {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    if (static_cast<int>(stack_.size()) >= kMaxDepth) {
      throw Refused{{to_position(mark), true, "nesting is deeper than " + std::to_string(kMaxDepth) + " levels"}};
    }
    Frame frame;
    frame.node.kind = kind;
    frame.node.at = to_position(mark);
    stack_.push_back(std::move(frame));
  }

  void close() {
    YamlNode node = std::move(stack_.back().node);
    stack_.pop_back();
    add(std::move(node));
  }

  void add(YamlNode node) {
    if (stack_.empty()) {
      root = std::move(node);
      have_root = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.node.kind == YamlNode::Kind::sequence) {
      top.node.items.push_back(std::move(node));
      return;
    }
    if (!top.have_key) {
      if (node.kind != YamlNode::Kind::scalar) {
        // A null key (`: value` or `? `) or a list/map used as a key.
        throw Refused{{node.at, true, "a map key must be a plain name"}};
      }
      auto [it, inserted] = top.seen.emplace(node.text, node.at);
      if (!inserted) {
        throw Refused{{node.at, true,
                       path_to(node.text) + ": duplicate key (first defined at line " +
                           std::to_string(it->second.line) + ")"}};
      }
      top.key = std::move(node);
      top.have_key = true;
      return;
    }
    // An empty value (`max_attempts:`) has yaml-cpp's mark at the next token, often on the next
    // line; point at its key instead.
    if (node.kind == YamlNode::Kind::null) node.at = top.key.at;
    top.node.entries.emplace_back(std::move(top.key), std::move(node));
    top.have_key = false;
  }
};

}  // namespace

std::variant<YamlNode, YamlError> parse_yaml(std::string_view text) {
  try {
    if (text.size() > kMaxDocumentBytes) {
      return YamlError{
          {}, false, "file is larger than " + std::to_string(kMaxDocumentBytes / 1024) + " KiB; refusing to parse it"};
    }
    if (auto bad = check_encoding(text)) return *bad;

    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    const LineIndex to_position(text);
    TreeBuilder builder(to_position, text);
    try {
      if (!parser.HandleNextDocument(builder)) return YamlNode{};  // empty: null document
      TreeBuilder second(to_position, text);
      if (parser.HandleNextDocument(second)) {
        return YamlError{second.have_root ? second.root.at : Position{}, second.have_root,
                         "only one YAML document is allowed (found a second one)"};
      }
    } catch (const Refused& refused) {
      return refused.error;
    } catch (const YAML::Exception& e) {
      return YamlError{to_position(e.mark), !e.mark.is_null(), "invalid YAML: " + e.msg};
    }
    if (!builder.have_root) return YamlNode{};
    return std::move(builder.root);
  } catch (const std::bad_alloc&) {
    return YamlError{{}, false, "out of memory while parsing"};
  } catch (const std::exception& e) {
    return YamlError{{}, false, std::string("cannot parse: ") + e.what()};
  } catch (...) {
    return YamlError{{}, false, "cannot parse: unknown error"};
  }
}

}  // namespace curlretry::config
