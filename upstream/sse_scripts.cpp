#include "upstream/sse_scripts.h"

#include <charconv>
#include <cstdio>

namespace curlretry::upstream {
namespace {

constexpr std::uint64_t kMaxStallMs = 600'000;
constexpr std::uint64_t kMaxPingBytes = std::uint64_t{64} << 20;
constexpr long kSplitGapMs = 5;  // between +split pieces: enough for each to be its own read
constexpr long kCutGapMs = 20;   // between the two halves of +cut

constexpr std::string_view kNames[] = {"sse-overload",
                                       "sse-good",
                                       "sse-late-error",
                                       "sse-invalid",
                                       "sse-oai-chat-good",
                                       "sse-oai-chat-overload",
                                       "sse-oai-responses-overload",
                                       "sse-anthropic-good",
                                       "sse-oai-responses-good",
                                       "sse-gemini-good",
                                       "sse-gemini-overload",
                                       "sse-code-assist-good"};

std::string event(std::string_view type, std::string_view data) {
  return "event: " + std::string(type) + "\ndata: " + std::string(data) + "\n\n";
}

std::string message_start(std::string_view key, std::uint64_t attempt) {
  return event("message_start", R"({"type":"message_start","message":{"id":"msg_)" + std::string(key) + "_" +
                                    std::to_string(attempt) +
                                    R"(","type":"message","role":"assistant","content":[],"model":"claude-test"}})");
}
std::string ping() { return event("ping", R"({"type": "ping"})"); }
std::string anthropic_error(std::string_view type, std::string_view message) {
  return event("error", R"({"type":"error","error":{"type":")" + std::string(type) + R"(","message":")" +
                            std::string(message) + R"("}})");
}
std::string block_start() {
  return event("content_block_start",
               R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
}
std::string text_delta(std::string_view text) {
  return event("content_block_delta",
               R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" + std::string(text) +
                   R"("}})");
}
std::vector<std::string> good_tail() {
  return {block_start(), text_delta("Hello"), text_delta(" world"),
          event("content_block_stop", R"({"type":"content_block_stop","index":0})"),
          event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})"),
          event("message_stop", R"({"type":"message_stop"})")};
}

// Complete streams as the agent CLIs parse them (usage counts, ids, the closing event each SDK
// waits for), with the text "Hello world".
std::vector<std::string> anthropic_good(std::string_view key, std::uint64_t attempt) {
  return {event("message_start", R"({"type":"message_start","message":{"id":"msg_)" + std::string(key) + "_" +
                                     std::to_string(attempt) +
                                     R"(","type":"message","role":"assistant","content":[],"model":"claude-test",)"
                                     R"("stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,)"
                                     R"("output_tokens":1}}})"),
          ping(), block_start(), text_delta("Hello"), text_delta(" world"),
          event("content_block_stop", R"({"type":"content_block_stop","index":0})"),
          event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},)"
                                 R"("usage":{"output_tokens":2}})"),
          event("message_stop", R"({"type":"message_stop"})")};
}

std::vector<std::string> responses_good(std::string_view key, std::uint64_t attempt) {
  const std::string id = "resp_" + std::string(key) + "_" + std::to_string(attempt);
  const std::string item = "msg_" + std::string(key) + "_" + std::to_string(attempt);
  const std::string message = R"({"type":"message","id":")" + item +
                              R"(","status":"completed","role":"assistant","content":[{"type":"output_text",)"
                              R"("text":"Hello world","annotations":[]}]})";
  return {event("response.created", R"({"type":"response.created","response":{"id":")" + id +
                                        R"(","status":"in_progress","error":null}})"),
          event("response.output_item.added", R"({"type":"response.output_item.added","output_index":0,"item":{)"
                                              R"("type":"message","id":")" + item +
                                              R"(","status":"in_progress","role":"assistant","content":[]}})"),
          event("response.output_text.delta", R"({"type":"response.output_text.delta","item_id":")" + item +
                                              R"(","output_index":0,"content_index":0,"delta":"Hello world"})"),
          event("response.output_item.done", R"({"type":"response.output_item.done","output_index":0,"item":)" +
                                             message + "}"),
          event("response.completed", R"({"type":"response.completed","response":{"id":")" + id +
                                          R"(","status":"completed","error":null,"output":[)" + message +
                                          R"(],"usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},)"
                                          R"("output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},)"
                                          R"("total_tokens":3}}})")};
}

std::string gemini_response(std::string_view key, std::uint64_t attempt) {
  return R"({"candidates":[{"content":{"parts":[{"text":"Hello world"}],"role":"model"},)"
         R"("finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2,)"
         R"("totalTokenCount":3},"modelVersion":"gemini-test","responseId":")" +
         std::string(key) + "_" + std::to_string(attempt) + "\"}";
}
std::string gemini_chunk(std::string_view key, std::uint64_t attempt) {
  return "data: " + gemini_response(key, attempt) + "\n\n";
}
// Code Assist (cloudcode-pa.googleapis.com, Gemini CLI's "Login with Google") wraps each chunk of
// the same stream: {"response": <chunk>, "traceId": ...}.
std::string code_assist_chunk(std::string_view key, std::uint64_t attempt) {
  return "data: {\"response\":" + gemini_response(key, attempt) + ",\"traceId\":\"" + std::string(key) + "_" +
         std::to_string(attempt) + "\"}\n\n";
}

std::string chat_chunk(std::string_view key, std::uint64_t attempt, std::string_view delta, std::string_view finish) {
  return "data: {\"id\":\"chatcmpl-" + std::string(key) + "-" + std::to_string(attempt) +
         R"(","object":"chat.completion.chunk","choices":[{"index":0,"delta":)" + std::string(delta) +
         R"(,"finish_reason":)" + std::string(finish) + "}]}\n\n";
}

std::optional<std::uint64_t> number_after(std::string_view base, std::string_view prefix, std::uint64_t max) {
  if (!base.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = base.substr(prefix.size());
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || value > max) return std::nullopt;
  return value;
}

// LF line ends as written above, turned into CRLF or CR for +eol=.
std::string with_eol(const std::string& bytes, std::string_view eol) {
  if (eol == "\n") return bytes;
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    if (c == '\n') out.append(eol);
    else out += c;
  }
  return out;
}

std::string http_chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + std::string(data) + "\r\n";
}

}  // namespace

std::optional<bool> parse_sse_script(std::string_view base, Step& step, std::string* error) {
  if (!base.starts_with("sse-")) return std::nullopt;
  step.kind = StepKind::sse_script;
  step.status = 200;
  for (std::string_view name : kNames) {
    if (base == name) {
      step.sse_name = std::string(name);
      return true;
    }
  }
  if (base.starts_with("sse-stall-")) {
    auto ms = number_after(base, "sse-stall-", kMaxStallMs);
    if (!ms) return error ? (*error = "sse-stall-<ms> wants ms up to 600000", false) : false;
    step.sse_name = "sse-stall";
    step.number = *ms;
    return true;
  }
  if (base.starts_with("sse-pings-")) {
    auto bytes = number_after(base, "sse-pings-", kMaxPingBytes);
    if (!bytes) return error ? (*error = "sse-pings-<bytes> wants bytes up to 67108864", false) : false;
    step.sse_name = "sse-pings";
    step.number = *bytes;
    return true;
  }
  if (error) {
    *error = "unknown SSE script '" + std::string(base) +
             "' (sse-overload, sse-good, sse-late-error, sse-invalid, sse-stall-<ms>, sse-pings-<bytes>, "
             "sse-oai-chat-good, sse-oai-chat-overload, sse-oai-responses-overload, sse-anthropic-good, "
             "sse-oai-responses-good, sse-gemini-good, sse-gemini-overload, sse-code-assist-good)";
  }
  return false;
}

std::vector<SsePiece> sse_script_pieces(const Step& step, std::string_view key, std::uint64_t attempt) {
  std::vector<std::string> events;
  long stall_before_content = 0;
  const std::string& name = step.sse_name;
  if (name == "sse-overload") {
    events = {message_start(key, attempt), ping(), anthropic_error("overloaded_error", "Overloaded")};
  } else if (name == "sse-good" || name == "sse-stall") {
    events = {message_start(key, attempt), ping()};
    for (auto& e : good_tail()) events.push_back(std::move(e));
    if (name == "sse-stall") stall_before_content = static_cast<long>(step.number);
  } else if (name == "sse-late-error") {
    events = {message_start(key, attempt), ping(), block_start(), text_delta("Hel"),
              anthropic_error("overloaded_error", "Overloaded")};
  } else if (name == "sse-invalid") {
    events = {message_start(key, attempt), anthropic_error("invalid_request_error", "max_tokens: too large")};
  } else if (name == "sse-pings") {
    events = {message_start(key, attempt)};
    for (std::uint64_t sent = 0; sent < step.number; sent += ping().size()) events.push_back(ping());
    events.push_back(anthropic_error("overloaded_error", "Overloaded"));
  } else if (name == "sse-oai-chat-good") {
    events = {chat_chunk(key, attempt, R"({"role":"assistant","content":"","refusal":null})", "null"),
              chat_chunk(key, attempt, R"({"content":"Hello"})", "null"),
              chat_chunk(key, attempt, "{}", R"("stop")"), "data: [DONE]\n\n"};
  } else if (name == "sse-oai-chat-overload") {
    events = {chat_chunk(key, attempt, R"({"role":"assistant","content":"","refusal":null})", "null"),
              R"(data: {"error":{"message":"The server is overloaded","type":"server_error","param":null,)"
              R"("code":"server_is_overloaded"}})"
              "\n\n"};
  } else if (name == "sse-anthropic-good") {
    events = anthropic_good(key, attempt);
  } else if (name == "sse-oai-responses-good") {
    events = responses_good(key, attempt);
  } else if (name == "sse-gemini-good") {
    events = {gemini_chunk(key, attempt)};
  } else if (name == "sse-code-assist-good") {
    events = {code_assist_chunk(key, attempt)};
  } else if (name == "sse-gemini-overload") {
    events = {R"(data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}})"
              "\n\n"};
  } else if (name == "sse-oai-responses-overload") {
    const std::string id = "resp_" + std::string(key) + "_" + std::to_string(attempt);
    events = {event("response.created", R"({"type":"response.created","response":{"id":")" + id +
                                            R"(","status":"in_progress","error":null}})"),
              event("response.in_progress", R"({"type":"response.in_progress","response":{"id":")" + id +
                                                R"(","status":"in_progress","error":null}})"),
              event("response.failed", R"({"type":"response.failed","response":{"id":")" + id +
                                           R"(","status":"failed","error":{"code":"server_is_overloaded",)"
                                           R"("message":"The server is overloaded"}}})")};
  }
  const std::string_view eol = step.sse_eol.empty() ? std::string_view("\n") : std::string_view(step.sse_eol);
  std::vector<SsePiece> pieces;
  for (std::size_t i = 0; i < events.size(); ++i) {
    // The stall sits between the setup events (message_start, ping) and the first content.
    const long pause = (stall_before_content > 0 && i == 2) ? stall_before_content : 0;
    pieces.push_back(SsePiece{pause, with_eol(events[i], eol)});
  }
  if (!step.sse_split && !step.sse_cut) return pieces;
  // Re-cut the whole body: +split=N pieces of N bytes, +cut=K two pieces at offset K.
  std::string all;
  for (const auto& p : pieces) all += p.bytes;
  std::vector<SsePiece> cut;
  if (step.sse_split) {
    const std::size_t n = static_cast<std::size_t>(*step.sse_split);
    for (std::size_t at = 0; at < all.size(); at += n) cut.push_back(SsePiece{at ? kSplitGapMs : 0, all.substr(at, n)});
  } else {
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(*step.sse_cut), all.size());
    if (k > 0) cut.push_back(SsePiece{0, all.substr(0, k)});
    if (k < all.size()) cut.push_back(SsePiece{k ? kCutGapMs : 0, all.substr(k)});
  }
  return cut;
}

bool play_sse_script(Stream& stream, const Request& request, const Step& step, std::string_view key,
                     std::uint64_t attempt) {
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "Transfer-Encoding: chunked\r\n" +
      std::string(request.keep_alive ? "" : "Connection: close\r\n") + "\r\n";
  bool ok = stream.write_all(head);
  for (const SsePiece& piece : sse_script_pieces(step, key, attempt)) {
    if (!ok) break;
    if (piece.pause_ms > 0) ok = stream.pause(piece.pause_ms);
    ok = ok && stream.write_all(http_chunk(piece.bytes));
  }
  ok = ok && stream.write_all("0\r\n\r\n");
  if (ok && request.keep_alive) return true;
  stream.finish_clean();
  return false;
}

}  // namespace curlretry::upstream
