#include "shim/request_headers.h"

#include <string_view>

#include "config/text.h"

namespace curlretry::shim {
namespace {

char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = fold(c);
  return out;
}

// The header name of a line ("Name: v", "Name:", "Name;"), empty when it has none.
std::string_view name_of(std::string_view line) {
  const auto end = line.find_first_of(":;");
  if (end == std::string_view::npos) return {};
  return config::text::trim(line.substr(0, end));
}

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (fold(a[i]) != fold(b[i])) return false;
  }
  return true;
}

}  // namespace

config::RequestHeaders read_request_headers(const curl_slist* list) {
  config::RequestHeaders out;
  for (; list != nullptr; list = list->next) {
    if (list->data == nullptr) continue;
    const std::string_view line(list->data);
    const auto sep = line.find_first_of(":;");
    if (sep == std::string_view::npos) continue;
    const std::string_view name = config::text::trim(line.substr(0, sep));
    if (name.empty()) continue;
    const std::string_view value = config::text::trim(line.substr(sep + 1));
    if (line[sep] == ':' && value.empty()) continue;  // removes libcurl's default: not sent
    if (line[sep] == ';' && !value.empty()) continue;  // not a header line libcurl sends as such
    out.emplace_back(lower(name), std::string(value));
  }
  return out;
}

void HeaderListCopy::build(const curl_slist* program,
                           const std::vector<std::pair<std::string, std::string>>& replace) {
  clear();
  std::vector<bool> done(replace.size(), false);
  for (; program != nullptr; program = program->next) {
    if (program->data == nullptr) continue;
    const std::string_view line(program->data);
    const std::string_view name = name_of(line);
    bool replaced = false;
    for (size_t i = 0; i < replace.size() && !name.empty(); ++i) {
      if (!same_name(name, replace[i].first)) continue;
      // Every occurrence goes; the new value is sent once, where the first one was.
      if (!done[i]) lines_.push_back(std::string(name) + ": " + replace[i].second);
      done[i] = true;
      replaced = true;
    }
    if (!replaced) lines_.emplace_back(line);
  }
  for (size_t i = 0; i < replace.size(); ++i) {
    if (!done[i]) lines_.push_back(replace[i].first + ": " + replace[i].second);
  }
  nodes_.resize(lines_.size());
  for (size_t i = 0; i < lines_.size(); ++i) {
    nodes_[i].data = lines_[i].data();
    nodes_[i].next = i + 1 < nodes_.size() ? &nodes_[i + 1] : nullptr;
  }
}

void HeaderListCopy::clear() {
  nodes_.clear();
  lines_.clear();
}

}  // namespace curlretry::shim
