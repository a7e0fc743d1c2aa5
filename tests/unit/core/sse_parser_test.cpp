// The WHATWG event-stream rules, and that every way of cutting the bytes into chunks gives the
// same blocks at the same offsets.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/sse_parser.h"

namespace curlretry::core {
namespace {

struct Seen {
  std::string type;
  std::string data;
  std::string id;
  long long retry = -1;
  bool dispatched = false;
  bool comment = false;
  std::uint64_t end = 0;
  bool operator==(const Seen&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Seen& s) {
  return os << "{" << s.type << "|" << s.data << "|id=" << s.id << "|retry=" << s.retry << "|d=" << s.dispatched
            << "|c=" << s.comment << "|end=" << s.end << "}";
}

Seen seen(const SseBlock& b) {
  return Seen{b.type, b.data, b.last_event_id, b.retry ? static_cast<long long>(*b.retry) : -1, b.dispatched,
              b.comment, b.end};
}

std::vector<Seen> parse_chunks(const std::vector<std::string>& chunks) {
  SseParser parser;
  std::vector<Seen> out;
  for (const auto& chunk : chunks) {
    const std::size_t used = parser.feed(chunk, [&](const SseBlock& b) {
      out.push_back(seen(b));
      return true;
    });
    EXPECT_EQ(used, chunk.size());
  }
  return out;
}

std::vector<Seen> parse(const std::string& text) { return parse_chunks({text}); }

// Every split into two chunks, and every byte on its own, must give the one-chunk result.
void expect_split_invariant(const std::string& text) {
  const auto whole = parse(text);
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(parse_chunks({text.substr(0, cut), text.substr(cut)}), whole) << "cut at " << cut;
  }
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(parse_chunks(bytes), whole) << "byte by byte";
}

TEST(SseParser, EventAndDataLines) {
  const auto blocks = parse("event: message_start\ndata: {\"a\":1}\n\n");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0], (Seen{"message_start", "{\"a\":1}", "", -1, true, false, 36}));
}

TEST(SseParser, DataLinesJoinWithLineFeed) {
  const auto blocks = parse("data: a\ndata:b\ndata:  c\ndata\n\n");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].data, "a\nb\n c\n");  // one space dropped; bare `data` is an empty value
  EXPECT_EQ(blocks[0].type, "message");
}

TEST(SseParser, EmptyDataIsStillAnEvent) {
  const auto blocks = parse("data:\n\n");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_TRUE(blocks[0].dispatched);
  EXPECT_EQ(blocks[0].data, "");
}

TEST(SseParser, CrlfLfAndCrAllEndLines) {
  const auto lf = parse("event: e\ndata: x\n\n");
  const auto crlf = parse("event: e\r\ndata: x\r\n\r\n");
  const auto cr = parse("event: e\rdata: x\r\r");
  ASSERT_EQ(lf.size(), 1u);
  ASSERT_EQ(crlf.size(), 1u);
  ASSERT_EQ(cr.size(), 1u);
  EXPECT_EQ(lf[0].type, "e");
  EXPECT_EQ(crlf[0].type, "e");
  EXPECT_EQ(cr[0].type, "e");
  EXPECT_EQ(crlf[0].data, "x");
  EXPECT_EQ(cr[0].data, "x");
  // A block ends at the first byte of the blank line's terminator.
  EXPECT_EQ(lf[0].end, 18u);
  EXPECT_EQ(crlf[0].end, 20u);
  EXPECT_EQ(cr[0].end, 18u);
}

TEST(SseParser, CrThenLfInTheNextChunkIsOneTerminator) {
  // "\r" | "\n\r\n": had the LF been a second line end, the event would end one line early.
  const auto blocks = parse_chunks({"data: x\r", "\ndata: y\r", "\n\r", "\n"});
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].data, "x\ny");
}

TEST(SseParser, CommentsAndRetryAreBlocksButNotEvents) {
  const auto blocks = parse(": keep-alive\n\nretry: 3000\n\nretry: 3s\n\n");
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_FALSE(blocks[0].dispatched);
  EXPECT_TRUE(blocks[0].comment);
  EXPECT_FALSE(blocks[1].dispatched);
  EXPECT_EQ(blocks[1].retry, 3000);
  EXPECT_EQ(blocks[2].retry, -1);  // not all digits: ignored
}

TEST(SseParser, CommentInsideAnEventDoesNotEndIt) {
  const auto blocks = parse("data: a\n: note\ndata: b\n\n");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].data, "a\nb");
  EXPECT_TRUE(blocks[0].comment);
}

TEST(SseParser, UnknownFieldsAndFieldWithoutColon) {
  const auto blocks = parse("foo: bar\nevent\ndata: x\n\n");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].type, "message");  // `event` without a value: empty, so "message"
  EXPECT_EQ(blocks[0].data, "x");
}

TEST(SseParser, FieldNamesAreCaseSensitive) {
  const auto blocks = parse("Event: x\nDATA: y\ndata: z\n\n");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].type, "message");
  EXPECT_EQ(blocks[0].data, "z");
}

TEST(SseParser, IdPersistsAcrossEventsAndNulIsRefused) {
  static constexpr char kText[] = "id: 7\ndata: a\n\ndata: b\n\nid: 8\0x\ndata: c\n\n";
  const auto blocks = parse(std::string(kText, sizeof kText - 1));
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].id, "7");
  EXPECT_EQ(blocks[1].id, "7");
  EXPECT_EQ(blocks[2].id, "7");
}

TEST(SseParser, EventTypeDoesNotLeakIntoTheNextEvent) {
  const auto blocks = parse("event: ping\ndata: {}\n\ndata: next\n\n");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].type, "ping");
  EXPECT_EQ(blocks[1].type, "message");
}

TEST(SseParser, LeadingBomIsSkippedOnlyAtTheStart) {
  const auto blocks = parse("\xEF\xBB\xBF" "data: a\n\n\xEF\xBB\xBF" "data: b\n\n");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].data, "a");
  EXPECT_EQ(blocks[1].data, "");  // the second BOM makes an unknown field name: only `data:` missing
  EXPECT_FALSE(blocks[1].dispatched);
}

TEST(SseParser, PartialBomIsContent) {
  const auto blocks = parse("\xEF" "data: a\n\n");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_FALSE(blocks[0].dispatched);  // the field is named "\xEF" "data"
}

TEST(SseParser, UnterminatedBlockAtTheEndIsNotReported) {
  EXPECT_TRUE(parse("event: error\ndata: {\"type\":\"error\"}\n").empty());
}

TEST(SseParser, StopsWhereTheCallbackSaysAndResumes) {
  SseParser parser;
  const std::string text = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
  std::vector<std::string> data;
  const std::size_t used = parser.feed(text, [&](const SseBlock& b) {
    data.push_back(b.data);
    return false;
  });
  EXPECT_EQ(used, 9u);
  EXPECT_EQ(data, std::vector<std::string>{"1"});
  parser.feed(std::string_view(text).substr(used), [&](const SseBlock& b) {
    data.push_back(b.data);
    return true;
  });
  EXPECT_EQ(data, (std::vector<std::string>{"1", "2", "3"}));
}

TEST(SseParser, AnthropicOverloadStreamAtEveryBoundary) {
  expect_split_invariant(
      "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\r\n\r\n"
      ": comment\r\n\r\nevent: ping\ndata: {\"type\": \"ping\"}\n\n"
      "event: error\rdata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
      "\"message\":\"Overloaded\"}}\r\r"
      "retry: 10\n\nid: 5\ndata: a\ndata: b\n\n");
}

TEST(SseParser, MixedTerminatorsAtEveryBoundary) {
  expect_split_invariant("\xEF\xBB\xBF" "data:x\r\r\n\n\r\ndata: y\r\n\rdata\n\n:c\r\n\r\nevent:\ndata: z\r\n\r\n");
}

}  // namespace
}  // namespace curlretry::core
