// What the launcher reads of Pi's models.json (proxy/pi_models.h): each provider's baseUrl, read
// as Pi reads the file (its `//` comments and trailing commas), nothing from text Pi would refuse.
#include "proxy/pi_models.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

using Urls = std::vector<std::string>;

TEST(PiModels, EachProvidersBaseUrl) {
  EXPECT_EQ(pi_provider_base_urls(R"({"providers": {
      "ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "models": [{"id": "q"}]},
      "company": {"api": "anthropic-messages", "baseUrl": "https:\/\/llm.corp.example/anthropic"},
      "anthropic": {"baseUrl": "https://gw.example", "modelOverrides": {"x": {"baseUrl": "https://no.example"}}}}})"),
            (Urls{"http://localhost:11434/v1", "https://llm.corp.example/anthropic", "https://gw.example"}));
}

TEST(PiModels, CommentsAndTrailingCommasAsPiAllowsThem) {
  // Pi strips `//` comments and commas before a closing bracket, never inside a string.
  EXPECT_EQ(pi_provider_base_urls("{\n  // my gateway\n  \"providers\": {\n    \"gw\": {\n"
                                  "      \"baseUrl\": \"https://gw.example//v1\", // the path has two slashes\n"
                                  "      \"models\": [{\"id\": \"a\",},],\n    },\n  },\n}\n"),
            Urls{"https://gw.example//v1"});
}

TEST(PiModels, NothingFromAFilePiWouldRefuseOrFromElsewhere) {
  EXPECT_EQ(pi_provider_base_urls(R"({"providers": {"gw": {"baseUrl": "https://gw"}}} x)"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(R"(/* block */ {"providers": {"gw": {"baseUrl": "https://gw"}}})"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(R"({"providers": {"gw": {"baseUrl": 3}, "x": "y", "z": null}})"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(R"({"other": {"gw": {"baseUrl": "https://no"}}})"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(std::string(100, '{')), Urls{});
  EXPECT_EQ(pi_provider_base_urls(""), Urls{});
}

TEST(AgentDir, HomesPiAgentOrTheVariablesDirectory) {
  testing::Scratch scratch;
  scratch.write(".pi/agent/models.json", R"({"providers": {"a": {"baseUrl": "https://home.example"}}})");
  scratch.write("elsewhere/models.json", R"({"providers": {"a": {"baseUrl": "https://set.example"}}})");
  scratch.set("HOME", scratch.dir());
  scratch.set("PI_CODING_AGENT_DIR", nullptr);
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://home.example"});
  scratch.set("PI_CODING_AGENT_DIR", "~/elsewhere");  // Pi expands a leading ~/ itself
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://set.example"});
  scratch.set("PI_CODING_AGENT_DIR", scratch.path("elsewhere"));
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://set.example"});
  scratch.set("PI_CODING_AGENT_DIR", scratch.path("none"));
  EXPECT_EQ(pi_models_base_urls(), Urls{});
}

TEST(AgentDir, AFileAnotherUserOwnsIsNotRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  testing::Scratch scratch;
  const std::string file =
      scratch.write("models.json", R"({"providers": {"a": {"baseUrl": "https://theirs.example"}}})");
  scratch.set("PI_CODING_AGENT_DIR", scratch.dir());
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://theirs.example"});  // root's own
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  EXPECT_EQ(pi_models_base_urls(), Urls{});
}

}  // namespace
}  // namespace curlretry::proxy
