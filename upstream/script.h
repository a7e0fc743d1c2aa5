// Scripts of the flaky upstream: `/s/<key>/<step>,<step>,...` (grammar in README.md).
// Pure parsing, no I/O, so that a typo in a test's URL is reported precisely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace curlretry::upstream {

enum class StepKind : std::uint8_t {
  respond,   // a complete response: any status, or captcha/quota/zai1302 (fixed bodies)
  reset,     // read the request, then close with a TCP RST, no response byte
  close,     // read the request, then close cleanly, no response byte (curl: empty reply)
  hang,      // wait `number` ms, then answer 200
  sse,       // 200 text/event-stream with `number` events 50 ms apart, then [DONE]
  break_body,// 200 announcing far more than `number` bytes, send `number`, then close
  echo,      // 200 `sha256=<hex> length=<n>` of the request body
  early503,  // 503 right after the request head, without reading the body (no 100 Continue)
  raw,       // exactly the bytes of +data= (a broken status line, NUL bytes...), then close
  sse_script,  // sse-<name>: a provider-shaped event stream (sse_scripts.h)
};

struct Step {
  std::string text;  // as written, for the request log
  StepKind kind = StepKind::respond;
  int status = 200;
  std::uint64_t number = 0;          // hang ms, sse events, break bytes
  std::optional<std::string> body;   // fixed body of a named step (captcha, quota, zai1302)

  // Modifiers (`+name=value`); values are sent verbatim so tests can also send garbage.
  std::optional<std::string> retry_after;     // +ra=        Retry-After: <value>
  std::optional<std::int64_t> retry_after_in; // +radate=    Retry-After: <IMF-fixdate now+s>
  std::optional<std::string> retry_after_ms;  // +ram=       retry-after-ms: <value>
  std::optional<std::string> should_retry;    // +xsr=       x-should-retry: <value>
  std::optional<std::uint64_t> length;        // +len=       body of that many pattern bytes
  std::optional<std::string> content_type;    // +ct=        Content-Type: <value>
  std::optional<std::string> location;        // +loc=       Location: <value>
  bool close_after = false;                   // +close      Connection: close, then close
  std::optional<std::uint64_t> header_padding;  // +hdr=     X-Padding: <that many bytes>
  std::optional<std::uint64_t> body_padding;    // +pad=     that many pattern bytes after the body
  std::optional<std::string> raw_data;        // +data=      the whole answer of a `raw` step
  std::string sse_name;                       // sse-<name>  which provider-shaped stream
  std::optional<std::uint64_t> sse_split;     // +split=     re-cut the stream into N-byte writes
  std::optional<std::uint64_t> sse_cut;       // +cut=       two writes, the first K bytes long
  std::string sse_eol;                        // +eol=       crlf or cr line ends (empty = lf)
};

struct Script {
  std::vector<Step> steps;  // never empty once parsed

  // The step that the attempt-th request (1-based) plays: past the end, the last one repeats.
  const Step& at(std::uint64_t attempt) const;
};

std::optional<Step> parse_step(std::string_view text, std::string* error);
std::optional<Script> parse_script(std::string_view text, std::string* error);

// Keys name counters and appear in JSON bodies, so they are kept to [A-Za-z0-9._~-]{1,200}.
bool valid_key(std::string_view key);

// %XX decoding; nullopt on a malformed escape. Lets a value carry ',', '+' or '/'.
std::optional<std::string> percent_decode(std::string_view text);

}  // namespace curlretry::upstream
