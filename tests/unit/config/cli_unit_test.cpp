// The pieces of the `curlretry` command that are not argument parsing: the library lookup,
// LD_PRELOAD editing, JSON quoting and explain's outcome building.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/describe.h"
#include "cli/explain.h"
#include "cli/json.h"
#include "cli/launch.h"
#include "cli/library_path.h"
#include "cli/usage.h"
#include "test_env.h"

namespace curlretry::cli {
namespace {

namespace fs = std::filesystem;

class LibraryPath : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/curlretry-cli-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    fs::create_directories(root_ + "/bin");
    exe_ = root_ + "/bin/curlretry";
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string touch(const std::string& relative) {
    const std::string path = root_ + "/" + relative;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << "x";
    return fs::canonical(path).string();
  }
  std::string root_, exe_;
};

TEST_F(LibraryPath, BuildTreeFirstThenInstalledLocations) {
  const auto candidates = library_candidates(exe_);
  ASSERT_GE(candidates.size(), 3u);
  EXPECT_EQ(candidates[0], root_ + "/shim/libcurlretry.so");
  EXPECT_EQ(candidates.back(), root_ + "/lib/libcurlretry.so");

  const std::string installed = touch("lib/libcurlretry.so");
  EXPECT_EQ(find_library(nullptr, exe_).path, installed);
  const std::string packaged = touch("lib/curlretry/libcurlretry.so");
  EXPECT_EQ(find_library(nullptr, exe_).path, packaged);
  const std::string build = touch("shim/libcurlretry.so");
  EXPECT_EQ(find_library("", exe_).path, build);
}

TEST_F(LibraryPath, TheEnvironmentVariableWinsAndMustExist) {
  touch("shim/libcurlretry.so");
  const std::string chosen = touch("custom/libmine.so");
  EXPECT_EQ(find_library(chosen.c_str(), exe_).path, chosen);
  const LibraryLookup missing = find_library((root_ + "/nope.so").c_str(), exe_);
  EXPECT_FALSE(missing.path);
  EXPECT_EQ(missing.error, "CURLRETRY_LIBRARY=" + root_ + "/nope.so: no readable file there");
}

TEST_F(LibraryPath, NotFoundListsWhatWasTried) {
  const LibraryLookup none = find_library(nullptr, exe_);
  EXPECT_FALSE(none.path);
  EXPECT_NE(none.error.find(root_ + "/shim/libcurlretry.so"), std::string::npos) << none.error;
  EXPECT_NE(none.error.find("CURLRETRY_LIBRARY"), std::string::npos) << none.error;
}

TEST(Preload, PrependsKeepingWhatWasThere) {
  EXPECT_EQ(prepend_preload("/l/libcurlretry.so", nullptr), "/l/libcurlretry.so");
  EXPECT_EQ(prepend_preload("/l/libcurlretry.so", ""), "/l/libcurlretry.so");
  EXPECT_EQ(prepend_preload("/l/libcurlretry.so", "/x/libfaketime.so"), "/l/libcurlretry.so:/x/libfaketime.so");
  EXPECT_EQ(prepend_preload("/l/libcurlretry.so", "/a.so /b.so"), "/l/libcurlretry.so:/a.so /b.so");
}

TEST(Preload, DoesNotAddTheLibraryTwice) {
  EXPECT_EQ(prepend_preload("/l/libcurlretry.so", "/a.so:/l/libcurlretry.so"), "/a.so:/l/libcurlretry.so");
  EXPECT_EQ(prepend_preload("/l/libcurlretry.so", "/l/libcurlretry.so"), "/l/libcurlretry.so");
  EXPECT_EQ(prepend_preload("/l/libcurlretry.so", "/l/libcurlretry.so.1"), "/l/libcurlretry.so:/l/libcurlretry.so.1");
}

TEST(Json, QuotesEscapesAndKeepsUtf8) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  EXPECT_EQ(json_quote("风控"), "\"风控\"");
  EXPECT_EQ(json_quote("bad\xff"), "\"bad\xEF\xBF\xBD\"");  // U+FFFD as UTF-8, as the attempt log writes it
  EXPECT_EQ(json_quote("\xe9t\xc3"), "\"\xEF\xBF\xBDt\xEF\xBF\xBD\"");
}

TEST(Describe, MatchAndValues) {
  EXPECT_EQ(describe_match({}), "every request");
  EXPECT_EQ(describe_match({"open.bigmodel.cn", "/api/*", "POST", {}}),
            "host open.bigmodel.cn, path /api/*, method POST");
  const KeyValues values = describe_policy(core::Policy::builtin());
  ASSERT_FALSE(values.empty());
  EXPECT_EQ(values[0], (std::pair<std::string, std::string>{"max_attempts", "3"}));
  EXPECT_EQ(values[8], (std::pair<std::string, std::string>{"retry_on.status", "[408, 429, 500, 502, 503, 504, 529]"}));
}

class Explain : public ::testing::Test {
 protected:
  void load(const std::string& yaml, config::testing::FakeEnv env = {}) {
    env_ = std::move(env);
    const config::LoadResult r = config::load_from_string(yaml, "t.yaml", env_.env());
    ASSERT_TRUE(r.ok()) << r.error;
    config_ = *r.config;
  }
  Explanation run(ExplainOptions options) {
    std::string error;
    auto e = explain(config_, options, error);
    EXPECT_TRUE(e) << error;
    return e ? *e : Explanation{};
  }
  std::string error_of(ExplainOptions options) {
    std::string error;
    EXPECT_FALSE(explain(config_, options, error));
    return error;
  }
  config::testing::FakeEnv env_;
  config::Config config_;
};

ExplainOptions request(std::string method, std::string url, int status) {
  ExplainOptions o;
  o.method = std::move(method);
  o.url = std::move(url);
  o.status = status;
  return o;
}

TEST_F(Explain, CaptchaFourHundredIsRetriedAfter1500ms) {
  load("version: 1\n");
  ExplainOptions o = request("POST", "https://open.bigmodel.cn/api/paas/v4/chat/completions", 400);
  o.body = R"({"code":3007,"msg":"captcha verify failed"})";
  const Explanation e = run(o);
  EXPECT_EQ(e.rule, "defaults");
  EXPECT_EQ(e.verdict.action, core::Action::retry);
  EXPECT_EQ(e.verdict.delay, core::Millis(1500));
}

TEST_F(Explain, HeadersAreMatchedCaseInsensitivelyFirstOneWins) {
  load("version: 1\n");
  ExplainOptions o = request("GET", "http://x/", 429);
  o.headers = {"RETRY-AFTER: 7", "retry-after: 9", "Retry-After-Ms:  250 ", "X-Should-Retry:true", "X-Other: 1"};
  const Explanation e = run(o);
  EXPECT_EQ(e.outcome.hints.retry_after, "7");
  EXPECT_EQ(e.outcome.hints.retry_after_ms, "250");
  EXPECT_EQ(e.outcome.hints.should_retry, "true");
}

TEST_F(Explain, BodyIsCutToTheRuleBodyWindow) {
  load("version: 1\nrules:\n  - match: {host: small}\n    body_window: 5\n");
  ExplainOptions o = request("GET", "http://small/", 400);
  o.body = "0123456789 captcha";
  const Explanation e = run(o);
  EXPECT_EQ(e.rule, "rules[0]");
  EXPECT_EQ(e.outcome.body_prefix, "01234");
  EXPECT_EQ(e.verdict.action, core::Action::give_up) << "the marker lies beyond the window";
}

TEST_F(Explain, BodyFromAFile) {
  load("version: 1\n");
  char path[] = "/tmp/curlretry-body-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "you hit your daily quota", 24), 24);
  ::close(fd);
  ExplainOptions o = request("GET", "http://x/", 429);
  o.body = std::string("@") + path;
  const Explanation e = run(o);
  ::unlink(path);
  EXPECT_EQ(e.outcome.body_prefix, "you hit your daily quota");
  EXPECT_EQ(e.verdict.action, core::Action::give_up);
}

TEST_F(Explain, TransportAttemptAndElapsedReachTheOutcome) {
  load("version: 1\n");
  ExplainOptions o = request("GET", "http://x/", 0);
  o.transport = "connect-refused";
  o.attempt = 2;
  o.elapsed_ms = 1234;
  const Explanation e = run(o);
  EXPECT_EQ(e.outcome.transport, core::Transport::connect_refused);
  EXPECT_EQ(e.outcome.attempt, 2);
  EXPECT_EQ(e.outcome.elapsed, core::Millis(1234));
  EXPECT_EQ(e.verdict.action, core::Action::retry);
}

TEST_F(Explain, DisabledMeansGiveUp) {
  config::testing::FakeEnv env;
  env.vars["CURLRETRY_DISABLE"] = "1";
  load("version: 1\n", env);
  const Explanation e = run(request("GET", "http://x/", 503));
  EXPECT_EQ(e.verdict.action, core::Action::give_up);
  EXPECT_EQ(core::reason_text(e.verdict), "disabled");
  EXPECT_EQ(e.verdict.what, "curlretry is disabled (env CURLRETRY_DISABLE)");
}

TEST_F(Explain, TheSettleStepsAreSaidWhereTheyCouldChangeTheVerdict) {
  load(
      "version: 1\nrules:\n  - name: api\n    match: {path: \"/auth/*\"}\n"
      "    auth: {on: [401], command: [\"/bin/tok\"], header: X-Key}\n");
  // A 401 the rule refreshes: decide gives up, the command's answer is known only at run time.
  Explanation e = run(request("GET", "http://x/auth/a", 401));
  EXPECT_EQ(e.verdict.action, core::Action::give_up);
  EXPECT_EQ(e.credential,
            "rule api refreshes X-Key on 401: its command runs (once per transfer); a value it prints means retry at "
            "once (auth-refresh), none means give up with this response: known only at run time");
  EXPECT_FALSE(e.upload.empty());  // the refresh's retry rewinds the upload too
  EXPECT_TRUE(e.commit.empty());
  ExplainOptions committed = request("GET", "http://x/auth/a", 401);
  committed.committed = true;
  e = run(committed);
  EXPECT_EQ(e.credential, "not refreshed: part of the response reached the program");
  EXPECT_TRUE(e.upload.empty());
  // Another status, or a path outside the rule: no credential step.
  EXPECT_TRUE(run(request("GET", "http://x/auth/a", 403)).credential.empty());
  EXPECT_TRUE(run(request("GET", "http://x/other", 401)).credential.empty());
  // A retry: its upload is rewound first; a success's headers may already be the program's.
  e = run(request("GET", "http://x/other", 503));
  EXPECT_EQ(e.verdict.action, core::Action::retry);
  EXPECT_EQ(
      e.upload,
      "the request's body, if any, is rewound before the retry; one that cannot be gives up (not-replayable): known "
      "only at run time");
  EXPECT_TRUE(e.commit.empty());
  ExplainOptions reset = request("HEAD", "http://x/other", 200);
  reset.transport = "reset";
  e = run(reset);
  EXPECT_EQ(e.verdict.action, core::Action::retry);
  EXPECT_EQ(e.commit,
            "if the program already had this response's headers (one without a body, handed over at their end), it "
            "gives up (committed) instead: known only at run time");
  EXPECT_TRUE(run(request("GET", "http://x/other", 404)).upload.empty());
}

TEST_F(Explain, BadOptionsAreExplained) {
  load("version: 1\n");
  EXPECT_EQ(error_of(request("GET", "/no/host", 503)), "URL \"/no/host\" has no host");
  // As curl reads it (port after the first ':'), so `explain` and the shim agree on what matches.
  EXPECT_EQ(error_of(request("GET", "http://a:b:c/x", 503)),
            "URL \"http://a:b:c/x\" has a port that is not a number from 0 to 65535");
  EXPECT_EQ(error_of(request("GET", "http://x/", 600)), "--status 600: expected an HTTP status, 100..599");
  EXPECT_EQ(error_of(request("GET", "http://x/", 0)),
            "say what the attempt produced: --status N and/or --transport KIND");
  ExplainOptions header = request("GET", "http://x/", 503);
  header.headers = {"no colon"};
  EXPECT_EQ(error_of(header), "--header \"no colon\": expected 'Name: value'");
  ExplainOptions attempt = request("GET", "http://x/", 503);
  attempt.attempt = 0;
  EXPECT_EQ(error_of(attempt), "--attempt 0: attempts count from 1");
  ExplainOptions transport = request("GET", "http://x/", 0);
  transport.transport = "bogus";
  EXPECT_EQ(error_of(transport).rfind("--transport bogus: unknown kind", 0), 0u);
}

TEST(Launch, StackedRetriesAreNamedWithTheirProduct) {
  EXPECT_EQ(stacking_warning({"curl", "--retry", "5", "https://x/"}, 3),
            "curl --retry 5 retries on top of curlretry: one failing request can be sent up to 6 x 3 = 18 times; "
            "drop curl's --retry or run curlretry -n 1");
  EXPECT_EQ(stacking_warning({"/usr/bin/curl", "--retry-all-errors", "https://x/"}, -1),
            "curl --retry-all-errors retries on top of curlretry: the attempts of the two layers multiply; "
            "drop curl's --retry or run curlretry -n 1");
  EXPECT_FALSE(stacking_warning({"curl", "--retry", "0", "https://x/"}, 3));
  EXPECT_FALSE(stacking_warning({"curl", "https://x/", "--", "--retry", "5"}, 3));
  EXPECT_FALSE(stacking_warning({"wget", "--retry", "5"}, 3));
  EXPECT_FALSE(stacking_warning({}, 3));
}

TEST(Launch, FlagsBecomeTheVariablesAndErrorsNameTheFlag) {
  LaunchOptions options;
  options.max_attempts = "5";
  options.jitter = "full";
  options.quiet = true;
  const std::vector<FlagVariable> flags = flag_variables(options);
  ASSERT_EQ(flags.size(), 3u);
  EXPECT_EQ(flags[0].variable, "CURLRETRY_MAX_ATTEMPTS");
  EXPECT_EQ(flags[1].variable, "CURLRETRY_JITTER");
  EXPECT_EQ((flags[2].variable + "=" + flags[2].value), "CURLRETRY_LOG=warn");
  EXPECT_EQ(name_the_flag("CURLRETRY_MAX_ATTEMPTS=x: not an integer", flags), "--max-attempts x: not an integer");
  EXPECT_EQ(name_the_flag("CURLRETRY_BASE_MS=x: not an integer", flags), "CURLRETRY_BASE_MS=x: not an integer");
}

TEST(Usage, ExtrasInCurlretrysWords) {
  EXPECT_EQ(describe_extra("--bogus"), "unknown option --bogus");
  EXPECT_EQ(describe_extra("--bogus=1"), "unknown option --bogus");
  EXPECT_EQ(describe_extra("bad.yaml"), "unexpected argument 'bad.yaml'");
  EXPECT_EQ(describe_extra("-"), "unexpected argument '-'");
}

}  // namespace
}  // namespace curlretry::cli
