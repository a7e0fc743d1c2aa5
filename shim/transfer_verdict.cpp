// The end of an attempt: the request resolved against the rules, the outcome gathered for
// core::decide, the verdict settled (core/settle.h: commit, fleet, credential, replay), then
// retry or deliver.
#include <cerrno>

#include "core/cooldown.h"
#include "core/settle.h"
#include "shim/events.h"
#include "shim/fleet_hook.h"
#include "shim/log.h"
#include "shim/proxy_layer.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/request_headers.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {
namespace {

using config::LogLevel;

core::Transport transport_of(CURLcode code, long os_errno) {
  switch (code) {
    case CURLE_OK:
    case CURLE_HTTP_RETURNED_ERROR: return core::Transport::ok;
    case CURLE_COULDNT_CONNECT: return core::Transport::connect_refused;
    case CURLE_SEND_ERROR: return os_errno == ECONNRESET ? core::Transport::reset : core::Transport::send;
    case CURLE_RECV_ERROR: return os_errno == ECONNRESET ? core::Transport::reset : core::Transport::recv;
    case CURLE_PARTIAL_FILE: return core::Transport::recv;
    case CURLE_GOT_NOTHING: return core::Transport::empty_reply;
    case CURLE_SSL_CONNECT_ERROR: return core::Transport::tls_handshake;
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3: return core::Transport::http2_stream;
    case CURLE_OPERATION_TIMEDOUT: return core::Transport::timeout;
    case CURLE_ABORTED_BY_CALLBACK:
    case CURLE_WRITE_ERROR:
    case CURLE_READ_ERROR: return core::Transport::host_abort;
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_NOT_BUILT_IN:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_FAILED_INIT:
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_BAD_CONTENT_ENCODING: return core::Transport::bad_argument;
    default: return core::Transport::other;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Classification

const config::Rule* Transfer::match_rule(std::string_view method, const UrlParts& parts) const {
  // Header rules need the program's header list; a config without them never reads it.
  config::RequestHeaders headers;
  const bool by_header = runtime_->config.has_header_rules();
  if (by_header) headers = read_request_headers(host.http_header);
  return runtime_->config.match(method, parts.host, parts.path, by_header ? &headers : nullptr);
}

void Transfer::resolve_request() {
  if (run_.policy != nullptr) return;
  const char* url = nullptr;
  const char* method = nullptr;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_EFFECTIVE_URL, &url);
    if (getinfo(easy_, CURLINFO_EFFECTIVE_METHOD, &method) != CURLE_OK) method = nullptr;
  }
  UrlParts parts = split_url(url ? url : host.url);
  run_.method = method ? method : "GET";
  run_.display = parts.display();
  run_.host = parts.host;
  run_.path = parts.path;
  const config::Rule* rule = match_rule(run_.method, parts);
  run_.rule = rule;
  run_.policy = rule ? &rule->policy : &runtime_->config.defaults;
  run_.rule_name = rule ? rule->name : "defaults";
  // Classified only once the connection is made: its address says whether our proxy answered.
  const char* primary_ip = nullptr;
  long primary_port = 0;
  if (auto getinfo = api_->easy_getinfo; getinfo && proxy_named()) {
    LibcurlScope scope(*api_);
    if (getinfo(easy_, CURLINFO_PRIMARY_IP, &primary_ip) != CURLE_OK) primary_ip = nullptr;
    if (getinfo(easy_, CURLINFO_PRIMARY_PORT, &primary_port) != CURLE_OK) primary_port = 0;
  }
  if (primary_ip != nullptr && retried_by_own_proxy(primary_ip, primary_port, parts)) {
    run_.single_attempt = std::make_unique<core::Policy>(*run_.policy);
    run_.single_attempt->max_attempts = 1;
    run_.policy = run_.single_attempt.get();
  }
}

core::Outcome Transfer::outcome(CURLcode code) const {
  core::Outcome o;
  long os_errno = 0;
  long response_code = 0;
  long connect_code = 0;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_OS_ERRNO, &os_errno);
    getinfo(easy_, CURLINFO_RESPONSE_CODE, &response_code);
    getinfo(easy_, CURLINFO_HTTP_CONNECTCODE, &connect_code);
  }
  o.transport = transport_of(code, os_errno);
  if (code == CURLE_WRITE_ERROR && !attempt_.host_refused) o.transport = core::Transport::ok;  // our own stop
  // The program's own callback refused the connection: its "no", not the network's.
  if (attempt_.socket_refused && code != CURLE_OK && code != CURLE_HTTP_RETURNED_ERROR) {
    o.transport = core::Transport::host_abort;
  }
  o.status = status_seen(attempt_.response.status, response_code);
  if (code == CURLE_RECV_ERROR && connect_code != 0 && connect_code / 100 != 2) {
    // libcurl reports a proxy's refusal of CONNECT (407, 403, 503...) as a receive error: it is
    // a response like any other, classified by its status.
    o.transport = core::Transport::ok;
    o.status = static_cast<int>(connect_code);
  } else if (code == CURLE_RECV_ERROR && os_errno == 0 && response_code != 0) {
    // A response arrived and libcurl found it malformed (a bad chunk, curl test 1416): a protocol
    // error, not a failure of the network. (A socket's receive error sets the errno; a body cut
    // short by a close is CURLE_PARTIAL_FILE, still retried.)
    o.transport = core::Transport::other;
  }
  o.hints = attempt_.response.hints;
  o.body_prefix = attempt_.held_body.substr(0, run_.policy->body_window);
  o.stream_error = attempt_.stream_hold.error_data();
  o.stream_error_event = attempt_.stream_hold.error_event();
  // A response delivered at the end of its headers had no body to hold: the decision (and its log
  // line) is the one it had when it was delivered at the end of the attempt.
  o.committed = phase() == Phase::committed;
  o.replayable = upload_replayable();
  o.unsafe_method = run_.method == "POST" || run_.method == "PATCH";
  o.attempt = run_.attempt;
  auto now = Clock::now();
  o.elapsed = std::chrono::duration_cast<core::Millis>(now - run_.started);
  if (run_.deadline) o.remaining = std::chrono::duration_cast<core::Millis>(*run_.deadline - now);
  o.previous_delay = run_.previous_delay;
  return o;
}

core::Verdict Transfer::decide_now(CURLcode code) {
  resolve_request();
  learn_hints();  // a response without a body byte never went through learn_status()
  core::Outcome o = outcome(code);
  return core::decide(*run_.policy, o, run_.random, std::chrono::system_clock::now());
}

Transfer::Step Transfer::finish_attempt(CURLcode code) {
  if (code == CURLE_SEND_FAIL_REWIND) run_.upload.report_ioctl_refusal(host.error_buffer);
  // The common case: a first attempt whose body already reached the host. Nothing to decide
  // (unless the attempt log wants a line for it).
  // -v (debug) also logs a first-try success. (A response delivered at the end of its headers
  // still gets its final log line, as it did when it was delivered here.)
  if (phase() == Phase::committed && run_.attempt == 1 && !events::enabled() && !attempt_.early_verdict &&
      !log::enabled(LogLevel::debug)) {
    // Not retried here, but the server may have asked the whole fleet to back off.
    if (core::cooldown::cools_fleet(attempt_.response.status) && fleet_hook::active(*runtime_)) {
      resolve_request();
      learn_hints();
      core::Verdict delivered;
      settle_with_fleet(delivered);
    } else if (!fleet_key_.earned && core::is_final_success(attempt_.response.status)) {
      // Credit, and the end of a cooldown: most successes had theirs at their commit already.
      fleet_hook::count_success(*runtime_, host, fleet_key_);
    }
    enter(Phase::done);
    return Step{false, core::Millis{0}, code};
  }
  core::Verdict verdict = attempt_.early_verdict ? *attempt_.early_verdict : decide_now(code);
  settle_verdict(verdict);
  record_event(verdict, code);
  if (verdict.action == core::Action::retry) {
    if (verdict.reason != core::Reason::auth_refresh) log_retry(verdict);  // refresh_credential() said it
    run_.last_transport_error = code != CURLE_OK && code != CURLE_HTTP_RETURNED_ERROR && code != CURLE_WRITE_ERROR;
    arm_heartbeat(verdict);
    note_overload();
    run_.previous_delay = verdict.delay;
    run_.retry_what = verdict.what;
    enter(Phase::waiting);
    return Step{true, verdict.delay, code};
  }
  log_final(verdict, attempt_.response.status);
  if (committed()) {
    enter(Phase::done);
    return Step{false, core::Millis{0}, code};
  }
  // The program refused what it was handed of this response: that was its answer to it.
  if (attempt_.held_refusal.refused()) return end_refused();
  // Give up: the host now sees the held response byte for byte, as without the shim.
  attempt_.replay_code = code;
  enter(Phase::replaying);
  return resume_replay();
}

void Transfer::settle_verdict(core::Verdict& verdict) {
  // The steps of core/settle.h in their order, each fact gathered only when its step can use it.
  core::settle::commit(verdict, phase() == Phase::committed_at_headers);
  settle_with_fleet(verdict);  // before the rewind: a transfer the fleet stops leaves the upload alone
  if (core::settle::wants_credential(verdict, wants_refresh(attempt_.response.status), committed())) {
    core::settle::credential(verdict, refresh_credential(verdict.what));
  }
  if (core::settle::wants_rewind(verdict)) core::settle::replay(verdict, rewind_upload());
}

void Transfer::settle_with_fleet(core::Verdict& verdict) {
  auto now = Clock::now();
  std::optional<core::Millis> left =
      run_.policy->max_elapsed - std::chrono::duration_cast<core::Millis>(now - run_.started);
  if (run_.deadline) left = std::min(*left, std::chrono::duration_cast<core::Millis>(*run_.deadline - now));
  const auto& response = attempt_.response;
  fleet_hook::Attempt attempt{api_, easy_,        &host,      run_.policy, response.status, &response.hints,
                              left, run_.attempt, &fleet_key_};
  const core::Millis planned = verdict.delay;
  fleet_hook::settle(*runtime_, attempt, verdict);
  // The recovery wake leaves a server's stated wait alone (fleet_hook::note_parked).
  fleet_key_.server_wait = !verdict.server_wait_header.empty() || verdict.delay > planned;
  if (verdict.action != core::Action::retry) return;
  // A cooldown's wait counts towards retry_after.max_ms in all; the token and probe waits are per
  // retry (each judged by its own allowance, core/fleet_verdict.h).
  if (verdict.delay > planned) run_.fleet_waited.cooldown += verdict.delay - planned;
  run_.fleet_waited.token = core::Millis{0};
  run_.fleet_waited.probe = core::Millis{0};
}

}  // namespace curlretry::shim
