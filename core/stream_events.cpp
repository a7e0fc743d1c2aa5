#include "core/stream_events.h"

#include <algorithm>
#include <array>
#include <optional>

#include "core/ascii.h"
#include "core/body_scan.h"
#include "core/provider_errors.h"

namespace curlretry::core {
namespace {

bool listed(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

constexpr std::array<std::string_view, 5> kTransientErrors = {"overloaded_error", "rate_limit_error", "api_error",
                                                              "server_is_overloaded", "rate_limit_exceeded"};
// OpenAI's "server_error" (a Responses stream's response.failed or error event; also the generic
// error.type beside a telling code) is what its own SDKs retry as a 500 when it comes as a
// status. Transient, but any more specific name beside it is the one that decides and is shown.
constexpr std::string_view kGenericTransient = "server_error";
constexpr std::array<std::string_view, 4> kPermanentErrors = {"invalid_request_error", "authentication_error",
                                                              "permission_error", "insufficient_quota"};
// Spelled many ways ("billing_hard_limit_reached", "context_length_exceeded"): matched as parts.
constexpr std::array<std::string_view, 3> kPermanentParts = {"billing", "context_length", "context length"};

bool transient_name(std::string_view name) {
  return std::find(kTransientErrors.begin(), kTransientErrors.end(), name) != kTransientErrors.end();
}

// The first of `names` that is transient, a specific name before the generic one.
const std::string* transient_of(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (transient_name(name)) return &name;
  }
  for (const auto& name : names) {
    if (name == kGenericTransient) return &name;
  }
  return nullptr;
}

bool permanent_name(std::string_view name) {
  if (std::find(kPermanentErrors.begin(), kPermanentErrors.end(), name) != kPermanentErrors.end()) return true;
  return std::any_of(kPermanentParts.begin(), kPermanentParts.end(),
                     [&](std::string_view part) { return name.find(part) != std::string_view::npos; });
}

// Where providers put the error's name: Anthropic error.type, OpenAI chat error.code/error.type,
// Google error.status, OpenAI responses response.error.code, OpenAI's bare error event code.
constexpr std::array<std::string_view, 7> kNamePaths = {
    "error.type", "error.code", "error.status", "response.error.code", "response.error.type", "code", "type"};

// Every name the data gives, in kNamePaths order, without the uninformative "error" of
// {"type":"error"}.
std::vector<std::string> error_names(std::string_view data) {
  std::vector<std::string> names;
  if (data.find('{') == std::string_view::npos) return names;
  for (std::string_view path : kNamePaths) {
    auto value = json_scalar_at(data, path);
    if (!value || value->empty() || *value == "error" || *value == "null") continue;
    if (!listed(names, *value)) names.push_back(std::move(*value));
  }
  return names;
}

bool error_envelope(std::string_view data) {
  // Cheap filter first: most events held are small JSON without the word.
  if (data.find("\"error\"") == std::string_view::npos) return false;
  if (json_scalar_at(data, "type") == std::optional<std::string>("error")) return true;
  for (std::string_view path : {"error.type", "error.code", "error.message"}) {
    if (auto value = json_scalar_at(data, path); value && *value != "null") return true;
  }
  return false;
}

// {"choices":[{"index":0,"delta":{"role":"assistant","content":""},...}]}: a chat stream's
// opening chunk, which carries no content yet. Any other member of the delta with a value
// other than null or "" (content, tool_calls, refusal text) makes it content.
bool role_only_chunk(std::string_view data) {
  const auto key = data.find("\"delta\"");
  if (key == std::string_view::npos || data.find("\"choices\"") == std::string_view::npos) return false;
  std::size_t i = key + 7;
  auto space = [&](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (i < data.size() && space(data[i])) ++i;
  if (i >= data.size() || data[i] != ':') return false;
  ++i;
  while (i < data.size() && space(data[i])) ++i;
  if (i >= data.size() || data[i] != '{') return false;
  // One string-aware pass over the delta's members; a nested object or array (tool_calls) is
  // content, and so is any member but the role whose value is not null or "".
  bool role = false;
  bool in_string = false, escaped = false, in_key = true;
  std::size_t token = i + 1;
  std::string_view name;
  for (std::size_t p = i + 1; p < data.size(); ++p) {
    const char c = data[p];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      return false;
    } else if (c == ':' && in_key) {
      name = data.substr(token, p - token);
      in_key = false;
      token = p + 1;
    } else if (c == ',' || c == '}') {
      if (!in_key) {
        std::string_view value = data.substr(token, p - token);
        value = ascii::trim(value);
        name = ascii::trim(name);
        const bool blank = value == "null" || value == "\"\"";
        if (name == "\"role\"") {
          role = !blank;
        } else if (!blank) {
          return false;
        }
      }
      if (c == '}') return role;
      in_key = true;
      token = p + 1;
    }
  }
  return false;  // cut short
}

// {"choices":[],"prompt_filter_results":[...]}: Azure OpenAI's opening chunk, before any choice.
bool no_choices_chunk(std::string_view data) {
  const auto key = data.find("\"choices\"");
  if (key == std::string_view::npos) return false;
  std::size_t i = key + 9;
  auto skip = [&] {
    while (i < data.size() && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r')) ++i;
  };
  skip();
  if (i >= data.size() || data[i] != ':') return false;
  ++i;
  skip();
  if (i >= data.size() || data[i] != '[') return false;
  ++i;
  skip();
  return i < data.size() && data[i] == ']';
}

}  // namespace

EventRole event_role(const StreamRules& rules, const SseBlock& block) {
  if (!block.dispatched) return EventRole::setup;
  if (block.type == "error" || block.type == "response.failed" || error_envelope(block.data)) {
    return EventRole::error;
  }
  if (listed(rules.content_events, block.type)) return EventRole::content;
  if (listed(rules.setup_events, block.type)) return EventRole::setup;
  if (block.type == "message" && (role_only_chunk(block.data) || no_choices_chunk(block.data))) {
    return EventRole::setup;
  }
  return rules.content_events.empty() ? EventRole::content : EventRole::setup;
}

std::string stream_error_name(std::string_view event_type, std::string_view data) {
  const std::vector<std::string> names = error_names(data);
  // The name the built-in table knows is the telling one ("server_is_overloaded" rather than
  // OpenAI's generic "server_error" type beside it).
  for (const auto& name : names) {
    if (transient_name(name) || permanent_name(name) || google_status_name(name)) return name;
  }
  if (const std::string* generic = transient_of(names)) return *generic;
  if (!names.empty()) return names.front();
  return std::string(event_type);
}

StreamScan scan_stream(const StreamRules& rules, std::string_view body) {
  StreamScan scan;
  SseParser parser;
  std::size_t events = 0;
  bool decided = false;
  parser.feed(body, [&](const SseBlock& block) {
    if (block.end > rules.hold_max_bytes) {
      scan.kind = StreamScan::Kind::limit;
      scan.end = rules.hold_max_bytes;
      decided = true;
      return false;
    }
    if (block.dispatched) ++events;
    const EventRole role = event_role(rules, block);
    if (role == EventRole::setup) return true;
    scan.kind = role == EventRole::content ? StreamScan::Kind::content : StreamScan::Kind::error;
    scan.event = events;
    scan.type = block.type;
    if (role == EventRole::error) scan.data = block.data;
    scan.end = block.end;
    decided = true;
    return false;
  });
  if (!decided && body.size() > rules.hold_max_bytes) {
    scan.kind = StreamScan::Kind::limit;
    scan.end = rules.hold_max_bytes;
  } else if (!decided) {
    scan.end = body.size();
  }
  return scan;
}

StreamErrorFinding classify_stream_error(const Policy& policy, std::string_view event_type, std::string_view data) {
  StreamErrorFinding f;
  f.name = stream_error_name(event_type, data);
  const std::string_view window = data.substr(0, policy.body_window);
  for (const CodeTable& table : policy.codes) {
    const auto value = json_scalar_at(window, table.path);
    if (!value) continue;
    if (listed(table.permanent, *value)) {
      f.reason = Reason::permanent_code;
      f.reason_detail = *value;
      f.detail = " code " + *value + " (permanent)";
      return f;
    }
    if (listed(table.retry, *value)) {
      f.retry = true;
      f.reason = Reason::code;
      f.reason_detail = *value;
      f.detail = " code " + *value;
      return f;
    }
  }
  if (auto known = google_status(window)) {
    f.retry = known->retry;
    f.reason = known->retry ? Reason::stream_error : known->reason;
    f.reason_detail = std::move(known->detail);
    f.detail = std::move(known->qualifier);
    return f;
  }
  if (const auto marker = find_marker(window, policy.permanent_markers)) {
    f.reason = Reason::permanent;
    f.reason_detail = std::string(*marker);
    f.detail = " " + std::string(*marker) + " (permanent)";
    return f;
  }
  const std::vector<std::string> names = error_names(window);
  for (const auto& name : names) {
    if (permanent_name(name)) {
      f.reason = Reason::permanent;
      f.reason_detail = name;
      f.detail = " (permanent)";
      return f;
    }
  }
  if (const std::string* name = transient_of(names)) {
    f.retry = true;
    f.reason = Reason::stream_error;
    f.reason_detail = *name;
    return f;
  }
  if (const auto marker = find_marker(window, policy.retry_markers)) {
    f.retry = true;
    f.reason = Reason::marker;
    f.reason_detail = std::string(*marker);
    f.detail = " " + std::string(*marker);
    return f;
  }
  f.reason = Reason::not_retryable;
  return f;
}

}  // namespace curlretry::core
