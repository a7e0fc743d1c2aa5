// A config file as a small tree of positioned YAML nodes. yaml-cpp's own Node hides what a strict
// loader needs (duplicate keys, aliases, whether a scalar was quoted), so we build our own from
// its event stream. Hostile input is bounded: size, nesting, one document, no anchors or aliases
// (the classic alias bomb), UTF-8 only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace curlretry::config {

struct Position {
  int line = 1;  // 1-based
  int column = 1;  // 1-based
};

// A map's key and value, named as std::pair names them. Not a std::pair<YamlNode, YamlNode>
// inside YamlNode: that instantiates the pair while YamlNode is incomplete, which the standard
// library does not allow (GCC lets it pass; clang, and so clang-tidy, rejects it).
struct YamlEntry;

struct YamlNode {
  enum class Kind : unsigned char { null, scalar, sequence, map };
  Kind kind = Kind::null;
  Position at;
  std::string text;    // scalar value
  bool quoted = false;  // '...' or "..." scalar: always a string, never a number or bool
  // The file the node was read from, set when several files are combined into one tree
  // (include_merge.h) so that errors and sources name the right one; empty = the one being loaded.
  std::string_view file;
  std::vector<YamlNode> items;                           // sequence
  std::vector<YamlEntry> entries;                        // map, in file order, keys unique
};

struct YamlEntry {
  YamlEntry() = default;
  YamlEntry(YamlNode key, YamlNode value) : first(std::move(key)), second(std::move(value)) {}
  YamlNode first;   // the key
  YamlNode second;  // the value
};

// The value of a map's member `key`, or nullptr (keys are unique: the reader refuses a repeat).
inline const YamlNode* member(const YamlNode& map, std::string_view key) {
  for (const auto& [name, value] : map.entries) {
    if (name.text == key) return &value;
  }
  return nullptr;
}

inline constexpr std::size_t kMaxDocumentBytes = 1024 * 1024;
inline constexpr int kMaxDepth = 64;

struct YamlError {
  Position at;
  bool has_position = true;
  std::string message;
};

// Parses one YAML document. Never throws. An empty document (nothing but comments) gives a null
// node.
std::variant<YamlNode, YamlError> parse_yaml(std::string_view text);

// What a node is, for "expected a map, got a list".
std::string_view describe(const YamlNode& node);

}  // namespace curlretry::config
