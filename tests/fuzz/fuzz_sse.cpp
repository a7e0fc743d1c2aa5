// The SSE parser and the stream hold's event reading, on bytes the upstream chooses and cuts
// into reads anywhere: any split gives the same blocks as one read, offsets only grow and stay
// inside the input, and the role / classification / scan of every block never misbehave.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "core/sse_parser.h"
#include "core/stream_events.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry::core;

namespace {

struct Seen {
  std::string type, data, id;
  std::uint64_t end;
  bool dispatched;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> parse(std::string_view body, const std::vector<std::size_t>& cuts) {
  SseParser parser;
  std::vector<Seen> out;
  std::size_t at = 0;
  auto take = [&](std::size_t n) {
    const std::size_t used = parser.feed(body.substr(at, n), [&](const SseBlock& b) {
      out.push_back(Seen{b.type, b.data, b.last_event_id, b.end, b.dispatched});
      return true;
    });
    FUZZ_CHECK(used == std::min(n, body.size() - at));
    at += used;
  };
  for (std::size_t cut : cuts) take(cut);
  take(body.size() - at);
  FUZZ_CHECK(parser.offset() == body.size());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<std::size_t> cuts;
  const int pieces = in.ConsumeIntegralInRange<int>(0, 8);
  for (int i = 0; i < pieces; ++i) cuts.push_back(in.ConsumeIntegralInRange<std::size_t>(0, 64));
  StreamRules rules = Policy::builtin().stream;
  rules.hold_max_bytes = in.ConsumeIntegralInRange<std::size_t>(0, 4096);
  const std::string body = in.ConsumeRemainingBytesAsString();

  const std::vector<Seen> whole = parse(body, {});
  FUZZ_CHECK(parse(body, cuts) == whole);
  std::uint64_t last = 0;
  const Policy policy = Policy::builtin();
  for (const Seen& s : whole) {
    FUZZ_CHECK(s.end > last && s.end <= body.size());
    last = s.end;
    SseBlock b;
    b.type = s.type;
    b.data = s.data;
    b.dispatched = s.dispatched;
    if (event_role(rules, b) == EventRole::error) {
      const StreamErrorFinding f = classify_stream_error(policy, b.type, b.data);
      FUZZ_CHECK(parse_reason(reason_text(f.reason, f.reason_detail)).has_value());
    }
  }
  const StreamScan scan = scan_stream(rules, body);
  FUZZ_CHECK(scan.end <= body.size() || scan.kind == StreamScan::Kind::limit);
  if (scan.kind == StreamScan::Kind::content || scan.kind == StreamScan::Kind::error) {
    FUZZ_CHECK(scan.end <= rules.hold_max_bytes && scan.event >= 1);
  }
  return 0;
}
