// An incremental Server-Sent Events parser following the WHATWG "event stream interpretation":
// lines end in CRLF, LF or CR (a CRLF may be split between two chunks), `:` starts a comment,
// `data:` lines are joined with LF, one leading space of a value is dropped, unknown fields and a
// non-numeric `retry:` are ignored, a leading UTF-8 BOM is skipped, and an unterminated block at
// the end of the stream is never reported. Bytes may arrive split at any point.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace curlretry::core {

// What lay between two blank lines. WHATWG dispatches an event only when a data: field was seen
// (`dispatched`); the other blocks (comments, retry:, a bare event: line) are reported too,
// because a stream hold has to know where they end.
struct SseBlock {
  std::string type = "message";  // the event: field, "message" when absent or empty
  std::string data;              // data: values joined by LF (no trailing LF)
  std::string last_event_id;     // the stream's last event ID at this point
  std::optional<std::uint64_t> retry;  // a valid retry: of this block, in ms
  bool dispatched = false;       // at least one data: field: a real event
  bool comment = false;          // at least one comment line
  std::uint64_t end = 0;         // stream offset just past the blank line's first terminator byte
};

class SseParser {
 public:
  // Parses `bytes`, calling `on_block(const SseBlock&)` at every blank line; the callback returns
  // false to stop. Returns how many bytes of `bytes` were consumed (all of them unless stopped:
  // then just past the terminator of the blank line that ended the block).
  template <typename OnBlock>
  std::size_t feed(std::string_view bytes, OnBlock&& on_block) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (!step(bytes[i])) continue;
      const bool go_on = on_block(static_cast<const SseBlock&>(block_));
      clear_block();
      if (!go_on) return i + 1;
    }
    return bytes.size();
  }

  std::uint64_t offset() const { return offset_; }  // bytes consumed so far
  // Bytes kept for an unfinished line (bounded by what the caller feeds).
  std::size_t pending() const { return line_.size(); }

 private:
  bool step(char c);  // true when a block ended at this byte
  bool end_line();    // true when the line was blank
  void field(std::string_view name, std::string_view value);
  void clear_block();

  std::string line_;
  SseBlock block_;
  std::string last_id_;
  std::uint64_t offset_ = 0;
  int bom_matched_ = 0;      // bytes of a leading BOM seen so far (3 = done or none)
  bool after_cr_ = false;    // the previous byte was a CR: an LF now ends nothing
};

}  // namespace curlretry::core
