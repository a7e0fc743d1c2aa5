#include "shim/request_headers.h"

#include <string_view>

#include "core/ascii.h"

namespace curlretry::shim {
namespace {

using core::ascii::lower;

// The header name of a line ("Name: v", "Name:", "Name;"), empty when it has none.
std::string_view name_of(std::string_view line) {
  const auto end = line.find_first_of(":;");
  if (end == std::string_view::npos) return {};
  return core::ascii::field_value(line.substr(0, end));
}

}  // namespace

config::RequestHeaders read_request_headers(const curl_slist* list) {
  config::RequestHeaders out;
  for (; list != nullptr; list = list->next) {
    if (list->data == nullptr) continue;
    const std::string_view line(list->data);
    const auto sep = line.find_first_of(":;");
    if (sep == std::string_view::npos) continue;
    const std::string_view name = core::ascii::field_value(line.substr(0, sep));
    if (name.empty()) continue;
    const std::string_view value = core::ascii::field_value(line.substr(sep + 1));
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
      if (!core::ascii::iequals(name, replace[i].first)) continue;
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
