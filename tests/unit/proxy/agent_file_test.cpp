// The one rule under which the launch reads an agent's own files.
#include "proxy/agent_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "proxy/ca_files.h"
#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

TEST(AgentFile, AFileAnotherUserOwnsIsNotRead) {
  // A working directory another user can write to (/tmp) must not choose what is intercepted.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  testing::Scratch scratch;
  const std::string path = scratch.write("settings.json", "{}");
  EXPECT_EQ(read_agent_file(path), "{}");  // root's own
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  EXPECT_EQ(read_agent_file(path), "");
  EXPECT_EQ(read_file(path), "{}");  // the file is there: only the owner rule refuses it
}

TEST(AgentFile, AFileOfAMebibyteOrMoreIsNotReadHalf) {
  testing::Scratch scratch;
  const std::string under(1024 * 1024 - 1, ' ');
  EXPECT_EQ(read_agent_file(scratch.write("under.json", under)), under);
  EXPECT_EQ(read_agent_file(scratch.write("at.json", under + " ")), "");
  EXPECT_EQ(read_agent_file(scratch.write("over.json", under + "  ")), "");
}

TEST(AgentFile, AFifoOrADirectoryOrNothingReadsAsNothingAtOnce) {
  testing::Scratch scratch;
  const std::string fifo = scratch.path("models.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_agent_file(fifo), "");  // returns: no writer is waited for
  EXPECT_EQ(read_agent_file(scratch.dir()), "");
  EXPECT_EQ(read_agent_file(scratch.path("missing.json")), "");
  EXPECT_EQ(read_agent_file(""), "");
}

TEST(AgentFile, CommentsAsPiStripsThem) {
  // `//` comments and commas before a closing bracket, never inside a string; a block comment stays
  // (Pi then refuses the file, so nothing is taken from it).
  EXPECT_EQ(strip_json_comments(R"({"a": "x,}", "b": [1, 2 , ], "c": "//", } )", kPiJsonComments),
            R"({"a": "x,}", "b": [1, 2  ], "c": "//" } )");
  EXPECT_EQ(strip_json_comments("[1, // two\n]", kPiJsonComments), "[1 \n]");
  EXPECT_EQ(strip_json_comments(R"(["a\"//b", 1])", kPiJsonComments), R"(["a\"//b", 1])");
  EXPECT_EQ(strip_json_comments("/* x */ {}", kPiJsonComments), "/* x */ {}");
}

TEST(AgentFile, CommentsAsQwenCodeStripsThem) {
  // Both kinds of comment, never inside a string; a trailing comma stays (Qwen Code then refuses
  // the file); an unclosed block comment ends the text.
  EXPECT_EQ(strip_json_comments("/* a\n b */{\"u\": \"https://x/*y*/\", // z\n\"v\": [1,]}", kQwenJsonComments),
            "{\"u\": \"https://x/*y*/\", \n\"v\": [1,]}");
  EXPECT_EQ(strip_json_comments("{} /* open", kQwenJsonComments), "{} ");
}

}  // namespace
}  // namespace curlretry::proxy
