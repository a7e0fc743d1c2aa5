// The transfer state machine (shim/transfer.*, docs/DESIGN.md §6), driven the way libcurl drives
// it: header lines to Transfer's header callback, body chunks to its write callback, the end of
// each attempt with a CURLcode. libcurl is a fake API table (setopt accepted and ignored, getinfo
// answered from the attempt being played, multi add/remove/info_read for the parking) and the
// clock is a fake one, so that waits pass without sleeping. Every transition of the machine is
// walked, with the exact bytes the program's callbacks see.
#include <gtest/gtest.h>

#include <cstdarg>
#include <deque>
#include <thread>
#include <string>
#include <vector>

#include "config/yaml_loader.h"
#include "shim/backoff_wait.h"
#include "shim/between_attempts.h"
#include "shim/clock.h"
#include "shim/log.h"
#include "shim/multi_state.h"
#include "shim/real_curl.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {
namespace {

// --- the fake clock --------------------------------------------------------------------------

Clock::time_point g_now = Clock::time_point{} + std::chrono::hours(1);
Clock::time_point fake_now() { return g_now; }
void advance(std::chrono::milliseconds d) { g_now += d; }

// --- the fake libcurl -------------------------------------------------------------------------

struct Libcurl {
  std::string url = "http://api.example/v1/chat";
  long response_code = 0;
  long os_errno = 0;
  std::deque<CURLMsg> done;  // what info_read hands out
  std::vector<CURL*> added;  // handles currently in the fake multi
  int adds = 0;
  int removes = 0;
} g_curl;

CURLcode fake_setopt(CURL*, CURLoption, ...) { return CURLE_OK; }

CURLcode fake_getinfo(CURL*, CURLINFO info, ...) {
  va_list ap;
  va_start(ap, info);
  CURLcode rc = CURLE_OK;
  switch (info) {
    case CURLINFO_EFFECTIVE_URL: *va_arg(ap, const char**) = g_curl.url.c_str(); break;
    case CURLINFO_EFFECTIVE_METHOD: *va_arg(ap, const char**) = "GET"; break;
    case CURLINFO_RESPONSE_CODE: *va_arg(ap, long*) = g_curl.response_code; break;
    case CURLINFO_OS_ERRNO: *va_arg(ap, long*) = g_curl.os_errno; break;
    case CURLINFO_HTTP_CONNECTCODE: *va_arg(ap, long*) = 0; break;
    case CURLINFO_CONTENT_TYPE: *va_arg(ap, const char**) = nullptr; break;
    case CURLINFO_SIZE_DOWNLOAD_T: *va_arg(ap, curl_off_t*) = 0; break;
    default: rc = CURLE_UNKNOWN_OPTION; break;
  }
  va_end(ap);
  return rc;
}

CURLMcode fake_add(CURLM*, CURL* easy) {
  ++g_curl.adds;
  g_curl.added.push_back(easy);
  return CURLM_OK;
}
CURLMcode fake_remove(CURLM*, CURL* easy) {
  ++g_curl.removes;
  std::erase(g_curl.added, easy);
  return CURLM_OK;
}
CURLMsg* fake_info_read(CURLM*, int* left) {
  static CURLMsg current;
  if (g_curl.done.empty()) {
    *left = 0;
    return nullptr;
  }
  current = g_curl.done.front();
  g_curl.done.pop_front();
  *left = static_cast<int>(g_curl.done.size());
  return &current;
}

// --- the program ------------------------------------------------------------------------------

struct Program {
  std::string headers;
  std::string body;
  // What the write callback answers: the size (accept), 0 (refuse) or CURL_WRITEFUNC_PAUSE, for
  // its next calls in turn; accept once the list is used up.
  std::deque<size_t> write_answers;
  int progress_calls = 0;
  int abort_at_progress_call = 0;  // 0: never
};

size_t program_header(char* data, size_t size, size_t nmemb, void* userdata) {
  static_cast<Program*>(userdata)->headers.append(data, size * nmemb);
  return size * nmemb;
}
size_t program_write(char* data, size_t size, size_t nmemb, void* userdata) {
  auto* p = static_cast<Program*>(userdata);
  if (!p->write_answers.empty()) {
    const size_t answer = p->write_answers.front();
    p->write_answers.pop_front();
    if (answer != size * nmemb) return answer;
  }
  p->body.append(data, size * nmemb);
  return size * nmemb;
}
int program_progress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* p = static_cast<Program*>(userdata);
  ++p->progress_calls;
  advance(std::chrono::milliseconds(100));  // the wait's slices pass on the fake clock
  return p->abort_at_progress_call == p->progress_calls ? 1 : 0;
}

class TransferPhases : public ::testing::Test {
 protected:
  void SetUp() override {
    config::Settings quiet;
    quiet.log_level = config::LogLevel::off;
    log::configure(quiet);
    Clock::set_source(&fake_now);
    g_curl = Libcurl{};
    runtime_.active = true;
    runtime_.config = config::builtin_config();
    runtime_.config.settings.fleet.store = config::FleetStore::off;
    policy().max_attempts = 3;
    api_.easy_setopt = &fake_setopt;
    api_.easy_getinfo = &fake_getinfo;  // no easy_header: our header callback reads every line
    api_.multi_add_handle = &fake_add;
    api_.multi_remove_handle = &fake_remove;
    api_.multi_info_read = &fake_info_read;
    transfer_.host.url = g_curl.url;
    transfer_.host.header_fn = &program_header;
    transfer_.host.header_data = &program_;
    transfer_.host.write_fn = &program_write;
    transfer_.host.write_data = &program_;
    transfer_.host.xferinfo_fn = &program_progress;
    transfer_.host.progress_data = &program_;
    transfer_.host.noprogress = false;
  }
  void TearDown() override {
    transfer_.end();
    Clock::set_source(nullptr);
  }

  core::Policy& policy() { return runtime_.config.defaults; }

  // One attempt's response through the callbacks, as libcurl hands it over. Returns what the
  // write callback answered for the last chunk.
  size_t respond(int status, const std::vector<std::string>& extra_headers, const std::string& body) {
    g_curl.response_code = status;
    std::vector<std::string> lines{"HTTP/1.1 " + std::to_string(status) + " X\r\n"};
    for (const auto& h : extra_headers) lines.push_back(h + "\r\n");
    lines.push_back("\r\n");
    for (auto& line : lines) {
      EXPECT_EQ(Transfer::on_header(line.data(), 1, line.size(), &transfer_), line.size()) << line;
    }
    size_t answer = 0;
    if (!body.empty()) {
      std::string copy = body;
      answer = Transfer::on_write(copy.data(), 1, copy.size(), &transfer_);
    }
    return answer;
  }

  static std::string head(int status, const std::vector<std::string>& extra = {}) {
    std::string h = "HTTP/1.1 " + std::to_string(status) + " X\r\n";
    for (const auto& e : extra) h += e + "\r\n";
    return h + "\r\n";
  }

  // The fake multi handle the multi tests' MultiState wraps.
  CURLM* fake_multi() { return reinterpret_cast<CURLM*>(&multi_handle_); }
  // The transfer begun, added to the fake multi (the host's add, passed on to libcurl) and
  // adopted by `state`, as a host's curl_multi_add_handle does it.
  void join_multi(MultiState& state, CURL* easy) {
    ASSERT_TRUE(transfer_.begin(runtime_, true));
    ASSERT_EQ(fake_add(fake_multi(), easy), CURLM_OK);
    state.adopt(easy, &transfer_);
  }

  // libcurl's DONE message for `easy`, for the multi state's next drain.
  static void libcurl_finished(CURL* easy, CURLcode result = CURLE_OK) {
    CURLMsg done{};
    done.msg = CURLMSG_DONE;
    done.easy_handle = easy;
    done.data.result = result;
    g_curl.done.push_back(done);
  }

  // A first attempt answered 503 under a backoff of exactly 1 s: the retry it asks for.
  Transfer::Step retry_503_after_one_second() {
    policy().backoff.base = core::Millis{1000};
    policy().backoff.max = core::Millis{1000};
    policy().backoff.jitter = core::Jitter::none;
    EXPECT_TRUE(transfer_.begin(runtime_, true));
    respond(503, {}, "busy");
    const Transfer::Step retry = transfer_.finish_attempt(CURLE_OK);
    EXPECT_TRUE(retry.retry);
    return retry;
  }

  Runtime runtime_;
  real::Api api_;
  int handle_ = 0;
  Transfer transfer_{reinterpret_cast<CURL*>(&handle_), &api_};
  Program program_;
  int multi_handle_ = 0;
};

TEST_F(TransferPhases, FirstTrySuccessStreamsAndIsDone) {
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  EXPECT_EQ(transfer_.phase(), Phase::attempting);
  EXPECT_FALSE(transfer_.begin(runtime_, true)) << "a transfer under way is not begun twice";
  EXPECT_EQ(respond(200, {"Content-Length: 5"}, "hello"), 5U);
  EXPECT_EQ(transfer_.phase(), Phase::committed);
  const Transfer::Step step = transfer_.finish_attempt(CURLE_OK);
  EXPECT_FALSE(step.retry);
  EXPECT_EQ(step.code, CURLE_OK);
  EXPECT_EQ(transfer_.phase(), Phase::done);
  transfer_.end();
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  EXPECT_EQ(program_.headers, head(200, {"Content-Length: 5"}));
  EXPECT_EQ(program_.body, "hello");
}

TEST_F(TransferPhases, RetryWaitsThenAttemptsAgainAndTheProgramSeesOnlyTheLastResponse) {
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  EXPECT_EQ(respond(503, {}, "busy"), 4U);
  EXPECT_EQ(transfer_.phase(), Phase::attempting) << "a failure candidate's body is held";
  const Transfer::Step retry = transfer_.finish_attempt(CURLE_OK);
  EXPECT_TRUE(retry.retry);
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
  EXPECT_EQ(program_.headers, "");
  EXPECT_EQ(program_.body, "");
  transfer_.prepare_next_attempt();
  EXPECT_EQ(transfer_.phase(), Phase::attempting);
  respond(200, {}, "ok");
  EXPECT_EQ(transfer_.phase(), Phase::committed);
  EXPECT_FALSE(transfer_.finish_attempt(CURLE_OK).retry);
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.headers, head(200));
  EXPECT_EQ(program_.body, "ok");
}

TEST_F(TransferPhases, GiveUpAfterMaxAttemptsReplaysTheLastHeldResponse) {
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  for (int attempt = 1; attempt <= 2; ++attempt) {
    respond(503, {}, "busy " + std::to_string(attempt));
    ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry) << attempt;
    EXPECT_EQ(transfer_.phase(), Phase::waiting);
    transfer_.prepare_next_attempt();
  }
  respond(503, {"Retry-After: 0"}, "busy 3");
  EXPECT_EQ(transfer_.phase(), Phase::attempting);
  const Transfer::Step last = transfer_.finish_attempt(CURLE_OK);
  EXPECT_FALSE(last.retry);
  EXPECT_FALSE(last.paused);
  EXPECT_EQ(last.code, CURLE_OK);
  EXPECT_EQ(transfer_.phase(), Phase::done) << "replaying, then done once all was handed over";
  EXPECT_EQ(program_.headers, head(503, {"Retry-After: 0"}));
  EXPECT_EQ(program_.body, "busy 3");
}

TEST_F(TransferPhases, AFinalResponseWithoutBodyCommitsAtTheEndOfItsHeaders) {
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(204, {}, "");
  EXPECT_EQ(transfer_.phase(), Phase::committed_at_headers);
  EXPECT_EQ(program_.headers, head(204)) << "delivered before libcurl goes on";
  EXPECT_FALSE(transfer_.finish_attempt(CURLE_OK).retry);
  EXPECT_EQ(transfer_.phase(), Phase::done);
}

TEST_F(TransferPhases, AConnectionResetAfterHeadersCommittedAtTheirEndIsNotRetried) {
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(200, {"Content-Length: 0"}, "");
  EXPECT_EQ(transfer_.phase(), Phase::committed_at_headers);
  g_curl.os_errno = 104;  // ECONNRESET: retryable, but the program has its headers
  const Transfer::Step step = transfer_.finish_attempt(CURLE_RECV_ERROR);
  EXPECT_FALSE(step.retry);
  EXPECT_EQ(step.code, CURLE_RECV_ERROR);
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.headers, head(200, {"Content-Length: 0"}));
}

TEST_F(TransferPhases, AHeldBodyTheProgramPausesIsReplayedOnUnpause) {
  policy().max_attempts = 1;
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(503, {}, "held body");
  // max_attempts 1: nothing could be retried, so nothing is held; the body streams at once.
  EXPECT_EQ(transfer_.phase(), Phase::committed);
  transfer_.end();

  policy().max_attempts = 2;
  program_ = Program{};
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(503, {}, "first");
  ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry);
  transfer_.prepare_next_attempt();
  respond(503, {}, "held body");
  program_.write_answers = {CURL_WRITEFUNC_PAUSE};
  const Transfer::Step paused = transfer_.finish_attempt(CURLE_OK);
  EXPECT_TRUE(paused.paused);
  EXPECT_EQ(transfer_.phase(), Phase::replay_paused);
  EXPECT_TRUE(transfer_.replay_paused());
  EXPECT_EQ(program_.headers, head(503));
  EXPECT_EQ(program_.body, "");
  transfer_.request_unpause();
  EXPECT_TRUE(transfer_.unpause_requested());
  const Transfer::Step resumed = transfer_.resume_replay();
  EXPECT_FALSE(resumed.paused);
  EXPECT_EQ(resumed.code, CURLE_OK);
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.body, "held body");
}

TEST_F(TransferPhases, AHeldBodyUnpausedOnItsThreadIsHandedOverInsideThePauseCall) {
  // As libcurl: curl_easy_pause(CONT) delivers the pending chunk before it returns; a refusal
  // of it is that call's answer (23), and the transfer goes on to its own result.
  policy().max_attempts = 2;
  for (const bool refuse : {false, true}) {
    program_ = Program{};
    ASSERT_TRUE(transfer_.begin(runtime_, true));
    respond(503, {}, "first");
    ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry);
    transfer_.prepare_next_attempt();
    respond(503, {}, "held body");
    program_.write_answers = {CURL_WRITEFUNC_PAUSE};
    if (refuse) program_.write_answers.push_back(0);
    ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).paused);
    bool elsewhere = true;
    std::thread([&] { elsewhere = transfer_.replay_paused_here(); }).join();
    EXPECT_FALSE(elsewhere) << "only the transfer's own thread hands the data over";
    ASSERT_TRUE(transfer_.replay_paused_here());
    if (!refuse) {
      EXPECT_EQ(transfer_.unpause_replay(), CURLE_OK);
      EXPECT_EQ(program_.body, "held body");
      EXPECT_EQ(transfer_.phase(), Phase::done);
    } else {
      EXPECT_EQ(transfer_.unpause_replay(), CURLE_WRITE_ERROR);
      EXPECT_EQ(program_.body, "");
      EXPECT_TRUE(transfer_.replay_paused());
      EXPECT_TRUE(transfer_.unpause_requested()) << "what follows comes after the call";
      const Transfer::Step rest = transfer_.resume_replay();
      EXPECT_FALSE(rest.paused);
      EXPECT_EQ(rest.code, CURLE_OK);
      EXPECT_EQ(transfer_.phase(), Phase::done);
    }
    EXPECT_EQ(transfer_.replay_code(), CURLE_OK);
    transfer_.end();
  }
}

TEST_F(TransferPhases, AProgressAbortWhileTheReplayIsPausedEndsItWith42) {
  policy().max_attempts = 2;
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(503, {}, "first");
  ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry);
  transfer_.prepare_next_attempt();
  respond(503, {}, "held body");
  program_.write_answers = {CURL_WRITEFUNC_PAUSE};
  ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).paused);
  EXPECT_TRUE(transfer_.replay_progress_continue());
  EXPECT_TRUE(transfer_.replay_paused());
  program_.abort_at_progress_call = program_.progress_calls + 1;
  EXPECT_FALSE(transfer_.replay_progress_continue());
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(transfer_.replay_code(), CURLE_ABORTED_BY_CALLBACK);
  EXPECT_EQ(program_.body, "");
}

TEST_F(TransferPhases, AProgramRefusingTheReplayEndsTheTransferWithAWriteError) {
  policy().max_attempts = 2;
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(429, {}, "slow down");
  ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry);
  transfer_.prepare_next_attempt();
  respond(429, {}, "slow down");
  program_.write_answers = {0};
  const Transfer::Step step = transfer_.finish_attempt(CURLE_OK);
  EXPECT_FALSE(step.retry);
  EXPECT_FALSE(step.paused);
  EXPECT_EQ(step.code, CURLE_WRITE_ERROR);
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.body, "");
}

TEST_F(TransferPhases, AProgramRefusingAStreamedBodyIsItsOwnAbortNotRetried) {
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  program_.write_answers = {0};
  EXPECT_EQ(respond(200, {}, "content"), 0U);
  EXPECT_EQ(transfer_.phase(), Phase::committed);
  const Transfer::Step step = transfer_.finish_attempt(CURLE_WRITE_ERROR);
  EXPECT_FALSE(step.retry);
  EXPECT_EQ(step.code, CURLE_WRITE_ERROR);
  EXPECT_EQ(transfer_.phase(), Phase::done);
}

TEST_F(TransferPhases, BackoffWaitPassesOnTheClockAndTheProgramMayAbortIt) {
  const Transfer::Step retry = retry_503_after_one_second();
  ASSERT_TRUE(retry.retry);
  EXPECT_EQ(retry.delay, core::Millis{1000});
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
  const auto before = Clock::now();
  program_.abort_at_progress_call = 0;
  Transfer::Step done;
  auto pending = between_attempts::start(transfer_, retry.delay, CURLE_OK, Clock::now());
  EXPECT_EQ(wait_between_attempts(transfer_, pending, done), WaitEnd::go);
  EXPECT_GE(Clock::now() - before, std::chrono::milliseconds(1000));
  EXPECT_EQ(program_.progress_calls, 10) << "the progress callback every 100 ms of the wait";
  transfer_.prepare_next_attempt();
  EXPECT_EQ(transfer_.phase(), Phase::attempting);

  respond(503, {}, "busy");
  ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry);
  program_.abort_at_progress_call = program_.progress_calls + 3;
  pending = between_attempts::start(transfer_, core::Millis{1000}, CURLE_OK, Clock::now());
  EXPECT_EQ(wait_between_attempts(transfer_, pending, done), WaitEnd::aborted);
  EXPECT_EQ(transfer_.aborted_during_backoff(), CURLE_ABORTED_BY_CALLBACK);
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
  transfer_.end();
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  EXPECT_EQ(program_.body, "");
}

TEST_F(TransferPhases, TheStepBetweenAttemptsWaitsUntilItsDueThenGoes) {
  // shim/between_attempts.h, as both the easy loop and the multi heap take it.
  const Transfer::Step retry = retry_503_after_one_second();
  ASSERT_TRUE(retry.retry);
  auto pending = between_attempts::start(transfer_, retry.delay, CURLE_OK, Clock::now());
  EXPECT_FALSE(pending.wakeable) << "the fleet is off: nothing can end the backoff early";
  between_attempts::Look look = between_attempts::look(transfer_, pending, Clock::now());
  EXPECT_EQ(look.kind, between_attempts::Look::Kind::wait);
  EXPECT_EQ(look.until, pending.due);
  advance(std::chrono::milliseconds(999));
  EXPECT_EQ(between_attempts::look(transfer_, pending, Clock::now()).kind, between_attempts::Look::Kind::wait);
  advance(std::chrono::milliseconds(1));
  EXPECT_EQ(between_attempts::look(transfer_, pending, Clock::now()).kind, between_attempts::Look::Kind::go);
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
}

class CredentialBetweenAttempts : public TransferPhases {
 protected:
  // A rule for every request that refreshes on 401 with `command`.
  void refresh_with(std::vector<std::string> command) {
    config::Rule rule;
    rule.name = "api";
    rule.policy = policy();
    rule.auth.on = {401};
    rule.auth.command = std::move(command);
    runtime_.config.rules = {rule};
  }
  // The first attempt refused with 401: the command starts in the background, the retry waits.
  void refused() {
    ASSERT_TRUE(transfer_.begin(runtime_, true));
    respond(401, {}, "expired");
    const Transfer::Step step = transfer_.finish_attempt(CURLE_OK);
    ASSERT_TRUE(step.retry);
    EXPECT_EQ(step.delay, core::Millis{0});
    pending_ = between_attempts::start(transfer_, step.delay, CURLE_OK, Clock::now());
  }
  between_attempts::PendingRetry pending_;
};

TEST_F(CredentialBetweenAttempts, AnEasyTransferKeepsCallingTheProgramWhileTheCommandRuns) {
  // Issue 28: easy no longer runs the command inside finish_attempt(). The program's deadline
  // comes (on the fake clock, the progress callback moving it on) while it runs: the command is
  // killed and the program gets the refused response, as it would have without the shim.
  refresh_with({"sleep", "30"});
  transfer_.host.timeout_ms = 1000;
  refused();
  const between_attempts::Look first = between_attempts::look(transfer_, pending_, Clock::now());
  EXPECT_EQ(first.kind, between_attempts::Look::Kind::wait);
  EXPECT_EQ(first.until, Clock::now() + between_attempts::kCredentialPoll);
  Transfer::Step done;
  EXPECT_EQ(wait_between_attempts(transfer_, pending_, done), WaitEnd::done);
  EXPECT_EQ(done.code, CURLE_OK);
  EXPECT_FALSE(done.retry);
  EXPECT_GE(program_.progress_calls, 9) << "every look of the wait, on the program's 1 s";
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.headers, head(401));
  EXPECT_EQ(program_.body, "expired") << "the refused response, byte for byte";
}

TEST_F(CredentialBetweenAttempts, AFailedCommandGivesUpWithTheRefusedResponse) {
  refresh_with({"sh", "-c", "exit 3"});
  refused();
  Transfer::Step done;
  EXPECT_EQ(wait_between_attempts(transfer_, pending_, done), WaitEnd::done);
  EXPECT_EQ(done.code, CURLE_OK);
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.headers, head(401));
  EXPECT_EQ(program_.body, "expired");
}

TEST_F(CredentialBetweenAttempts, ACommandThatAnswersLetsTheRetryGo) {
  refresh_with({"echo", "Bearer fresh"});
  refused();
  Transfer::Step done;
  EXPECT_EQ(wait_between_attempts(transfer_, pending_, done), WaitEnd::go);
  transfer_.prepare_next_attempt();
  EXPECT_EQ(transfer_.phase(), Phase::attempting);
}

TEST_F(CredentialBetweenAttempts, AParkedMultiTransferTakesTheSameStepAndGivesUpAtTheProgramsDeadline) {
  // The multi heap looks at its parked transfer through the same driver: every kCredentialPoll
  // while the command runs, then, at the program's 1 s, the refused response and its DONE.
  refresh_with({"sleep", "30"});
  transfer_.host.timeout_ms = 1000;
  CURL* easy = reinterpret_cast<CURL*>(&handle_);
  MultiState state(fake_multi(), &api_);
  ASSERT_NO_FATAL_FAILURE(join_multi(state, easy));
  respond(401, {}, "expired");
  libcurl_finished(easy);
  state.drain();
  EXPECT_EQ(state.parked(), 1);
  state.readd_due();
  ASSERT_TRUE(state.ms_until_due().has_value());
  EXPECT_EQ(*state.ms_until_due(), between_attempts::kCredentialPoll.count()) << "the command still runs";
  advance(std::chrono::milliseconds(1100));
  state.readd_due();
  EXPECT_EQ(state.parked(), 0);
  EXPECT_TRUE(g_curl.added.empty()) << "the retry is never sent";
  int left = -1;
  const CURLMsg* msg = state.next_message(&left);
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->data.result, CURLE_OK);
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  EXPECT_EQ(program_.headers, head(401));
  EXPECT_EQ(program_.body, "expired");
  state.release(easy);
}

TEST_F(TransferPhases, TheProgramsDeadlineOnTheClockStopsARetry) {
  transfer_.host.timeout_ms = 2000;
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  advance(std::chrono::milliseconds(1500));
  respond(503, {"Retry-After: 1"}, "busy");
  const Transfer::Step step = transfer_.finish_attempt(CURLE_OK);
  EXPECT_FALSE(step.retry) << "a 1 s wait would outlast the 500 ms left";
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.body, "busy");
}

TEST_F(TransferPhases, AHeldFirstAttemptWaitsThenAttempts) {
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  transfer_.hold_first_attempt();
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
  transfer_.prepare_next_attempt();
  EXPECT_EQ(transfer_.phase(), Phase::attempting);
  respond(200, {}, "ok");
  EXPECT_EQ(transfer_.finish_attempt(CURLE_OK).code, CURLE_OK);
  EXPECT_EQ(program_.body, "ok");
}

TEST_F(TransferPhases, NonHttpIsNotOursAndAResetForgetsATransfer) {
  transfer_.host.url = "ftp://files.example/x";
  EXPECT_FALSE(transfer_.begin(runtime_, true));
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  transfer_.host.url = g_curl.url;
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  transfer_.forget_install();  // curl_easy_reset
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  EXPECT_FALSE(transfer_.installed());
}

TEST_F(TransferPhases, AFailedCredentialRefreshWhileWaitingReplaysTheRefusedResponse) {
  // A multi transfer parked for a credential command that then failed (MultiState::readd_due):
  // the response of the attempt that asked for the refresh is the answer.
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(503, {"Retry-After: 0"}, "refused");
  ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry);
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
  const Transfer::Step step = transfer_.give_up_after_refresh(CURLE_OK);
  EXPECT_FALSE(step.retry);
  EXPECT_EQ(step.code, CURLE_OK);
  EXPECT_EQ(transfer_.phase(), Phase::done);
  EXPECT_EQ(program_.headers, head(503, {"Retry-After: 0"}));
  EXPECT_EQ(program_.body, "refused");
}

TEST_F(TransferPhases, CallbacksWhileIdlePassStraightToTheProgram) {
  // Our callbacks stay installed between transfers; a transfer libcurl runs without us meanwhile
  // (a nested perform from inside a callback) reaches the program untouched.
  ASSERT_TRUE(transfer_.begin(runtime_, true));
  respond(503, {}, "held");
  ASSERT_TRUE(transfer_.finish_attempt(CURLE_OK).retry);
  transfer_.end();
  ASSERT_TRUE(transfer_.installed());
  EXPECT_EQ(respond(503, {}, "not held"), 8U);
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  EXPECT_EQ(program_.headers, head(503));
  EXPECT_EQ(program_.body, "not held");
}

// --- the multi parking ------------------------------------------------------------------------

TEST_F(TransferPhases, AMultiTransferIsParkedUntilDueThenReaddedAndReportedOnce) {
  policy().backoff.base = core::Millis{500};
  policy().backoff.max = core::Millis{500};
  policy().backoff.jitter = core::Jitter::none;
  CURL* easy = reinterpret_cast<CURL*>(&handle_);
  MultiState state(fake_multi(), &api_);
  ASSERT_NO_FATAL_FAILURE(join_multi(state, easy));

  respond(503, {}, "busy");
  libcurl_finished(easy);
  state.drain();
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
  EXPECT_EQ(state.parked(), 1) << "still running as far as the host knows";
  EXPECT_TRUE(g_curl.added.empty()) << "libcurl no longer has it";
  int left = -1;
  EXPECT_EQ(state.next_message(&left), nullptr) << "no DONE for a retried attempt";
  ASSERT_TRUE(state.ms_until_due().has_value());
  EXPECT_EQ(*state.ms_until_due(), 500);

  advance(std::chrono::milliseconds(499));
  state.readd_due();
  EXPECT_EQ(transfer_.phase(), Phase::waiting) << "not due yet";
  advance(std::chrono::milliseconds(1));
  state.readd_due();
  EXPECT_EQ(transfer_.phase(), Phase::attempting);
  EXPECT_EQ(state.parked(), 0);
  ASSERT_EQ(g_curl.added.size(), 1U);

  respond(200, {}, "ok");
  libcurl_finished(easy);
  state.drain();
  EXPECT_EQ(transfer_.phase(), Phase::idle) << "a finished multi transfer ends at once";
  const CURLMsg* msg = state.next_message(&left);
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->easy_handle, easy);
  EXPECT_EQ(msg->data.result, CURLE_OK);
  EXPECT_EQ(state.next_message(&left), nullptr) << "exactly one DONE per transfer";
  EXPECT_EQ(program_.body, "ok");
  state.release(easy);
}

TEST_F(TransferPhases, AMultiTransferWhoseReplayIsPausedHoldsItsDoneUntilUnpaused) {
  CURL* easy = reinterpret_cast<CURL*>(&handle_);
  MultiState state(fake_multi(), &api_);
  ASSERT_NO_FATAL_FAILURE(join_multi(state, easy));

  // A wait longer than retry_after.max_ms: given up at once, with the held response.
  respond(503, {"Retry-After: 99999"}, "last");
  program_.write_answers = {CURL_WRITEFUNC_PAUSE};
  libcurl_finished(easy);
  state.drain();
  EXPECT_EQ(transfer_.phase(), Phase::replay_paused);
  EXPECT_EQ(state.parked(), 1) << "a paused replay still counts as running";
  int left = -1;
  EXPECT_EQ(state.next_message(&left), nullptr) << "no DONE before the program has the response";

  state.drain();
  EXPECT_EQ(transfer_.phase(), Phase::replay_paused) << "not resumed without curl_easy_pause(CONT)";
  transfer_.request_unpause();
  state.drain();
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  EXPECT_EQ(state.parked(), 0);
  const CURLMsg* msg = state.next_message(&left);
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->data.result, CURLE_OK);
  EXPECT_EQ(state.next_message(&left), nullptr);
  EXPECT_EQ(program_.headers, head(503, {"Retry-After: 99999"}));
  EXPECT_EQ(program_.body, "last");
  state.release(easy);
}

TEST_F(TransferPhases, AMultiTransferHeldBeforeItsFirstAttemptIsAddedWhenDue) {
  CURL* easy = reinterpret_cast<CURL*>(&handle_);
  MultiState state(fake_multi(), &api_);
  ASSERT_NO_FATAL_FAILURE(join_multi(state, easy));
  state.hold_first_attempt(easy, core::Millis{300});  // fleet.hold_new's wait
  EXPECT_EQ(transfer_.phase(), Phase::waiting);
  EXPECT_TRUE(g_curl.added.empty());
  EXPECT_EQ(state.parked(), 1);
  advance(std::chrono::milliseconds(300));
  state.readd_due();
  EXPECT_EQ(transfer_.phase(), Phase::attempting);
  EXPECT_EQ(g_curl.added.size(), 1U);
  respond(200, {}, "ok");
  libcurl_finished(easy);
  state.drain();
  int left = -1;
  ASSERT_NE(state.next_message(&left), nullptr);
  EXPECT_EQ(transfer_.phase(), Phase::idle);
  EXPECT_EQ(program_.body, "ok");
  state.release(easy);
}

}  // namespace
}  // namespace curlretry::shim
