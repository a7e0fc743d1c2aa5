// The attempt log's writer (shim/events.cpp) and its readers (core/json_object.h, and through it
// `curlretry stats`) agree on one schema, core/attempt_log.h: the fields in that order, each read
// back as written.
#include <gtest/gtest.h>

#include <string>

#include "cli/stats.h"
#include "core/attempt_log.h"
#include "core/json_object.h"
#include "shim/events.h"

namespace curlretry {
namespace {

std::string line_of(const shim::events::Event& e) {
  char buffer[shim::events::kMaxLine];
  const std::size_t n = shim::events::format(e, 1748779200123LL, 4242, "curl", buffer, sizeof buffer);
  return std::string(buffer, n);
}

shim::events::Event sample() {
  shim::events::Event e;
  e.method = "POST";
  e.host = "api.z.ai";
  e.path = "/v1/\"q\"\x01\xff";
  e.attempt = 2;
  e.status = 429;
  e.outcome = "HTTP 429 code 1302";
  e.retry = true;
  e.reason = core::Reason::code;
  e.reason_detail = "1302";
  e.delay_ms = 1500;
  e.bytes = 57;
  e.rule = "zai";
  return e;
}

TEST(EventsSchema, TheWriterEmitsTheFieldsInTheTablesOrder) {
  shim::events::Event e = sample();
  e.fallback = "model claude-y";
  const std::string line = line_of(e);
  std::size_t at = 0;
  for (const std::string_view field : core::attempt_log::kFields) {
    const std::size_t found = line.find("\"" + std::string(field) + "\":", at);
    ASSERT_NE(found, std::string::npos) << field << " in " << line;
    at = found + field.size();
  }
  const auto object = core::json::read_object(line.substr(0, line.size() - 1));
  ASSERT_TRUE(object) << line;
  EXPECT_EQ(object->size(), core::attempt_log::kFields.size());
  EXPECT_EQ(*core::json::string_member(*object, core::attempt_log::kFallback), "model claude-y");
}

TEST(EventsSchema, TheReadersReadBackWhatWasWritten) {
  const std::string line = line_of(sample());
  ASSERT_EQ(line.back(), '\n');
  const auto object = core::json::read_object(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(object) << line;
  namespace field = core::attempt_log;
  EXPECT_EQ(*core::json::string_member(*object, field::kTime), "2025-06-01T12:00:00.123Z");
  EXPECT_EQ(*core::json::string_member(*object, field::kPath), "/v1/\"q\"\x01\xEF\xBF\xBD");
  EXPECT_EQ(*core::json::string_member(*object, field::kReason), "code:1302");
  EXPECT_EQ(*core::json::string_member(*object, field::kVerdict), "retry");
  EXPECT_EQ(core::json::number_member(*object, field::kDelayMs), 1500);
  EXPECT_EQ(core::json::string_member(*object, field::kFallback), nullptr);  // not switched: absent

  const auto record = cli::parse_record(line);
  ASSERT_TRUE(record) << line;
  EXPECT_EQ(record->time_ms, 1748779200123LL);
  EXPECT_EQ(record->pid, 4242);
  EXPECT_EQ(record->program, "curl");
  EXPECT_EQ(record->host, "api.z.ai");
  EXPECT_EQ(record->attempt, 2);
  EXPECT_EQ(record->status, 429);
  EXPECT_EQ(record->verdict, core::VerdictKind::retry);
  EXPECT_EQ(record->reason, "code:1302");
  EXPECT_EQ(record->delay_ms, 1500);
}

}  // namespace
}  // namespace curlretry
