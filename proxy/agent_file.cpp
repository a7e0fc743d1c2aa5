#include "proxy/agent_file.h"

#include <cstddef>

#include "proxy/ca_files.h"

namespace curlretry::proxy {

namespace {

constexpr std::size_t kMaxAgentFileBytes = 1 << 20;

// The string literal starting at text[i] (a '"'), through its closing quote or the end.
std::size_t string_end(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

// The end of the comment starting at text[i] (a '/'), or i when none starts there.
std::size_t comment_end(std::string_view text, std::size_t i, bool block) {
  if (i + 1 >= text.size() || text[i] != '/') return i;
  if (text[i + 1] == '/') {
    const std::size_t eol = text.find('\n', i);
    return eol == std::string_view::npos ? text.size() : eol;
  }
  if (block && text[i + 1] == '*') {
    const std::size_t close = text.find("*/", i + 2);
    return close == std::string_view::npos ? text.size() : close + 2;
  }
  return i;
}

}  // namespace

std::string read_agent_file(const std::string& path) {
  // read_file stops at the bound: a text that reaches it may be cut, and half a file is not read.
  std::string text = read_file(path, kMaxAgentFileBytes, /*owned=*/true);
  if (text.size() >= kMaxAgentFileBytes) return {};
  return text;
}

std::string strip_json_comments(std::string_view text, JsonComments rules) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = string_end(text, i);
      out.append(text.substr(i, end - i));
      i = end;
    } else if (const std::size_t end = comment_end(text, i, rules.block); end != i) {
      i = end;
    } else if (c == ',' && rules.trailing_commas) {
      // Dropped when only whitespace and comments lead to a closing bracket: the whitespace stays,
      // as Pi's replacement keeps it.
      std::size_t j = i + 1;
      while (j < text.size()) {
        if (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r') {
          ++j;
        } else if (const std::size_t past = comment_end(text, j, rules.block); past != j) {
          j = past;
        } else {
          break;
        }
      }
      if (j >= text.size() || (text[j] != '}' && text[j] != ']')) out.push_back(c);
      ++i;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

}  // namespace curlretry::proxy
