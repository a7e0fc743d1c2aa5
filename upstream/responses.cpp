#include "upstream/responses.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "core/ascii.h"
#include "upstream/sse_scripts.h"

namespace curlretry::upstream {
namespace {

constexpr std::string_view kPattern = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+\n";
static_assert(kPattern.size() == 64);

constexpr std::size_t kSendChunk = 64 * 1024;
constexpr long kSseGapMs = 50;
constexpr std::uint64_t kBreakShortfall = 1'000'000;  // announced but never sent

bool is_bodyless(int status) { return status < 200 || status == 204 || status == 304; }

std::string head_of(const Request& request, const Response& r) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(reason_phrase(r.status)) + "\r\n";
  if (!r.no_body) {
    if (!r.content_type.empty()) head += "Content-Type: " + r.content_type + "\r\n";
    head += "Content-Length: " + std::to_string(r.body.size() + r.pattern) + "\r\n";
  }
  for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
  if (r.close || !request.keep_alive) head += "Connection: close\r\n";
  head += "\r\n";
  return head;
}

// `n` header-safe bytes: the pattern line without its '+' and newline, repeated.
std::string padding(std::uint64_t n) {
  constexpr std::string_view kLine = kPattern.substr(0, 62);
  std::string out;
  out.reserve(static_cast<std::size_t>(n));
  while (out.size() < n) out.append(kLine.substr(0, std::min<std::size_t>(kLine.size(), n - out.size())));
  return out;
}

bool send_pattern(Stream& stream, std::uint64_t n) {
  for (std::uint64_t sent = 0; sent < n;) {
    std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(n - sent, kSendChunk));
    if (!stream.write_all(pattern_bytes(sent, piece))) return false;
    sent += piece;
  }
  return true;
}

// The response a status step describes, modifiers applied.
Response response_for(const Step& step, const Exchange& x) {
  Response r;
  r.status = step.status;
  r.close = step.close_after;
  if (is_bodyless(r.status)) {
    r.no_body = true;
  } else if (step.length) {
    r.content_type = "application/octet-stream";
    r.pattern = *step.length;
  } else if (step.body) {
    r.content_type = "application/json";
    r.body = *step.body;
  } else if (r.status < 300) {
    r.content_type = "text/plain";
    r.body = ok_body(x.key, x.attempt);
  } else if (r.status < 400) {
    r.content_type = "text/plain";
    r.body = "redirect key=" + std::string(x.key) + " attempt=" + std::to_string(x.attempt) + "\n";
  } else {
    r.content_type = "application/json";
    r.body = error_body(r.status, x.key, x.attempt);
  }
  if (step.content_type) r.content_type = *step.content_type;
  if (step.location) r.headers.emplace_back("Location", *step.location);
  if (step.retry_after) r.headers.emplace_back("Retry-After", *step.retry_after);
  if (step.retry_after_in) {
    auto now = std::chrono::system_clock::now().time_since_epoch();
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now).count();
    r.headers.emplace_back("Retry-After", imf_fixdate(seconds + *step.retry_after_in));
  }
  if (step.retry_after_ms) r.headers.emplace_back("retry-after-ms", *step.retry_after_ms);
  if (step.should_retry) r.headers.emplace_back("x-should-retry", *step.should_retry);
  if (step.header_padding) r.headers.emplace_back("X-Padding", padding(*step.header_padding));
  if (step.body_padding && !r.no_body) r.pattern += *step.body_padding;
  return r;
}

bool finish(Stream& stream, const Request& request, bool close, bool sent) {
  if (sent && !close && request.keep_alive) return true;
  stream.finish_clean();
  return false;
}

bool play_sse(Stream& stream, const Request& request, const Step& step) {
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "Transfer-Encoding: chunked\r\n" +
      std::string(request.keep_alive ? "" : "Connection: close\r\n") + "\r\n";
  auto chunk = [](const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
  };
  bool ok = stream.write_all(head);
  for (std::uint64_t i = 1; ok && i <= step.number; ++i) {
    // Each event goes out on its own so clients see them live; TCP_NODELAY is set on accept.
    ok = stream.write_all(chunk("data: {\"n\":" + std::to_string(i) + "}\n\n")) && stream.pause(kSseGapMs);
  }
  ok = ok && stream.write_all(chunk("data: [DONE]\n\n") + "0\r\n\r\n");
  return finish(stream, request, false, ok);
}

bool play_break(Stream& stream, const Request& request, const Step& step) {
  Response r;
  r.content_type = "application/octet-stream";
  r.pattern = step.number + kBreakShortfall;  // announced...
  if (stream.write_all(head_of(request, r))) send_pattern(stream, step.number);  // ...not all sent
  stream.finish_clean();
  return false;
}

}  // namespace

std::string ok_body(std::string_view key, std::uint64_t attempt) {
  return "ok key=" + std::string(key) + " attempt=" + std::to_string(attempt) + "\n";
}

std::string error_body(int status, std::string_view key, std::uint64_t attempt) {
  std::string word;
  if (status == 503 || status == 529) {
    word = "overloaded";
  } else {
    word = core::ascii::lower(reason_phrase(status));
  }
  return R"({"error":")" + word + R"(","key":")" + std::string(key) + R"(","attempt":)" +
         std::to_string(attempt) + "}";
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 422: return "Unprocessable Content";
    case 425: return "Too Early";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 529: return "Site Overloaded";
    default: return "Status";
  }
}

std::string pattern_bytes(std::uint64_t offset, std::size_t n) {
  std::string out;
  out.reserve(n);
  std::size_t at = static_cast<std::size_t>(offset % kPattern.size());
  while (out.size() < n) {
    std::size_t take = std::min(n - out.size(), kPattern.size() - at);
    out.append(kPattern.substr(at, take));
    at = 0;
  }
  return out;
}

std::string imf_fixdate(std::int64_t unix_seconds) {
  // Formatted by hand: strftime would follow the host's locale (the demo runs in-process).
  static constexpr std::array<const char*, 7> kDays = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[40];
  std::snprintf(out, sizeof out, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday], tm.tm_mday,
                kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return out;
}

bool send_response(Stream& stream, const Request& request, const Response& response) {
  std::string bytes = head_of(request, response);
  bool head_only = request.method == "HEAD" || response.no_body;
  if (!head_only) bytes += response.body;  // one write for the common small response
  if (!stream.write_all(bytes)) return false;
  return head_only || send_pattern(stream, response.pattern);
}

bool play_step(Stream& stream, const Request& request, const Step& step, const Exchange& x) {
  switch (step.kind) {
    case StepKind::reset:
      stream.finish_reset();
      return false;
    case StepKind::close:
      stream.finish_clean();
      return false;
    case StepKind::raw:
      // The bytes as given, whatever they are, then a clean close: they end the exchange.
      stream.write_all(*step.raw_data);
      stream.finish_clean();
      return false;
    case StepKind::sse:
    case StepKind::break_body:
      // A HEAD gets the plain 200 head below: these two are all about the body.
      if (request.method == "HEAD") break;
      return step.kind == StepKind::sse ? play_sse(stream, request, step) : play_break(stream, request, step);
    case StepKind::sse_script:
      if (request.method == "HEAD") break;
      return play_sse_script(stream, request, step, x.key, x.attempt);
    case StepKind::hang:
      if (!stream.pause(static_cast<long>(step.number))) {
        stream.finish_clean();  // the client left or we are stopping: nobody to answer
        return false;
      }
      break;
    case StepKind::echo:
    case StepKind::respond:
    case StepKind::early503:
      break;
  }
  Response r = response_for(step, x);
  if (step.kind == StepKind::echo && !step.length) {
    r.content_type = step.content_type.value_or("text/plain");
    r.body = "sha256=" + x.body_sha256 + " length=" + std::to_string(x.body_length) + "\n";
  }
  bool sent = send_response(stream, request, r);
  return finish(stream, request, r.close, sent);
}

void play_early(Stream& stream, const Request& request, const Step& step, const Exchange& x) {
  Response r = response_for(step, x);
  r.close = true;  // the unread body makes the connection unusable
  if (send_response(stream, request, r)) stream.finish_lingering();
  else stream.finish_clean();
}

}  // namespace curlretry::upstream
