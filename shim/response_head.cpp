#include "shim/response_head.h"

#include "core/ascii.h"
#include "shim/url_parts.h"

namespace curlretry::shim {
namespace {

// The value of header `name` (lower case) if `line` is that header.
std::optional<std::string> header_value(std::string_view line, std::string_view name) {
  if (!core::ascii::istarts_with(line, name) || line.size() <= name.size() || line[name.size()] != ':') {
    return std::nullopt;
  }
  return std::string(core::ascii::field_value(line.substr(name.size() + 1)));
}

}  // namespace

int status_of_line(std::string_view line) {
  if (line.size() < 12 || line.substr(0, 5) != "HTTP/") return 0;
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos || sp + 4 > line.size()) return 0;
  int status = 0;
  for (size_t i = sp + 1; i < sp + 4; ++i) {
    if (line[i] < '0' || line[i] > '9') return 0;
    status = status * 10 + (line[i] - '0');
  }
  return status;
}

bool is_blank_line(std::string_view line) { return line == "\r\n" || line == "\n"; }

bool ResponseHead::note_line(std::string_view line) {
  if (int s = status_of_line(line); s != 0) {
    clear();  // a fresh head
    status = s;
    return false;
  }
  if (is_blank_line(line)) return true;
  char first = line.empty() ? '\0' : core::ascii::lower(line[0]);
  if (first == 'c' || first == 'l') {
    if (auto length = header_value(line, "content-length")) {
      no_body = *length == "0";
    } else if (auto location = header_value(line, "location")) {
      location_not_http = location->find("://") != std::string::npos && !url_is_http(*location);
    }
    return false;
  }
  if (!core::may_be_hint(first, status)) return false;  // one test for every other line
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) hints.take(line.substr(0, colon), line.substr(colon + 1), status);
  return false;
}

}  // namespace curlretry::shim
