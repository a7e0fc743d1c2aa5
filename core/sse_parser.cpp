#include "core/sse_parser.h"

#include "core/ascii.h"

namespace curlretry::core {
namespace {

constexpr char kBom[] = "\xEF\xBB\xBF";

}  // namespace

bool SseParser::step(char c) {
  ++offset_;
  if (bom_matched_ < 3) {
    if (c == kBom[bom_matched_]) {
      ++bom_matched_;
      return false;
    }
    // Not a BOM after all: what looked like one is ordinary line content.
    line_.append(kBom, static_cast<std::size_t>(bom_matched_));
    bom_matched_ = 3;
  }
  if (after_cr_) {
    after_cr_ = false;
    if (c == '\n') return false;  // the LF of a CRLF whose CR already ended the line
  }
  if (c == '\r') {
    after_cr_ = true;
    return end_line();
  }
  if (c == '\n') return end_line();
  line_ += c;
  return false;
}

bool SseParser::end_line() {
  const std::string_view line = line_;
  if (line.empty()) {
    block_.end = offset_;
    block_.last_event_id = last_id_;
    return true;
  }
  if (line.front() == ':') {
    block_.comment = true;
  } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    std::string_view value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    field(line.substr(0, colon), value);
  } else {
    field(line, {});
  }
  line_.clear();
  return false;
}

void SseParser::field(std::string_view name, std::string_view value) {
  if (name == "event") {
    block_.type = value.empty() ? "message" : std::string(value);
  } else if (name == "data") {
    if (block_.dispatched) block_.data += '\n';
    block_.data.append(value);
    block_.dispatched = true;
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_ = std::string(value);
  } else if (name == "retry") {
    if (!value.empty() && ascii::only_digits(value) && value.size() <= 18) {
      std::uint64_t ms = 0;
      for (char c : value) ms = ms * 10 + static_cast<std::uint64_t>(c - '0');
      block_.retry = ms;
    }
  }
}

void SseParser::clear_block() {
  line_.clear();
  block_.type = "message";
  block_.data.clear();
  block_.retry.reset();
  block_.dispatched = false;
  block_.comment = false;
}

}  // namespace curlretry::core
