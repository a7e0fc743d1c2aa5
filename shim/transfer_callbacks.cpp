// libcurl's callbacks into the transfer while an attempt runs: body, headers, upload reads and
// seeks; what they learn of the response (status, hints, whether it may be retried).
#include <string_view>

#include "core/ascii.h"
#include "shim/fleet_hook.h"
#include "shim/header_lookup.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/response_head.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {

// ---------------------------------------------------------------------------------------------
// Callbacks

size_t Transfer::on_write(char* data, size_t size, size_t nmemb, void* userdata) {
  return static_cast<Transfer*>(userdata)->write(data, size * nmemb);
}
size_t Transfer::on_header(char* data, size_t size, size_t nmemb, void* userdata) {
  return static_cast<Transfer*>(userdata)->header(data, size * nmemb);
}
size_t Transfer::on_read(char* buffer, size_t size, size_t nitems, void* userdata) {
  return static_cast<Transfer*>(userdata)->read(buffer, size, nitems);
}
int Transfer::on_seek(void* userdata, curl_off_t offset, int origin) {
  return static_cast<Transfer*>(userdata)->seek(offset, origin);
}

size_t Transfer::write(char* data, size_t n) {
  // Committed, or no transfer of ours (a nested perform with our callbacks still installed).
  if (phase() != Phase::attempting) return host_write(data, n);
  if (!header_cb_ && !attempt_.status_learned) learn_status();
  // A host that paused its upload may be waiting for this very body to resume it (curl test
  // 1533: a 401 answered before the upload): holding it would deadlock the transfer.
  if (attempt_.response.candidate && attempt_.upload_paused) attempt_.response.candidate = false;
  if (!attempt_.response.candidate) {
    if (size_t r = 0; hold_stream(data, n, r)) return r;
    // A response that cannot be retried: the first body byte (of a 2xx event stream: the first
    // content event) commits the transfer. (Nothing held: nothing to flush, no call.)
    switch (holds_anything() ? flush_held() : Flush::done) {
      case Flush::done: break;
      case Flush::paused: return CURL_WRITEFUNC_PAUSE;  // libcurl offers this chunk again later
      case Flush::refused: attempt_.host_refused = true; return 0;
    }
    enter(Phase::committed);
    fleet_hook::commit_success(*runtime_, host, fleet_key_, attempt_.response.status);
    size_t r = host_write(data, n);
    if (r != n && r != CURL_WRITEFUNC_PAUSE) attempt_.host_refused = true;
    return r;
  }
  if (attempt_.held_body.size() + n <= runtime_->config.settings.max_error_body) {
    attempt_.held_body.append(data, n);
    return n;
  }
  // The held body outgrew its bound: decide with what we have rather than hold forever.
  core::Verdict verdict = decide_now(CURLE_OK);
  if (verdict.action == core::Action::retry) {
    attempt_.early_verdict = verdict;
    return 0;  // our own abort of this attempt; libcurl reports CURLE_WRITE_ERROR
  }
  attempt_.response.candidate = false;
  return write(data, n);
}

size_t Transfer::header(char* data, size_t n) {
  if (phase() != Phase::attempting) {
    if (!host_wants_headers()) return n;
    size_t r = deliver_header_line(data, n);
    if (r != n && r != CURL_WRITEFUNC_PAUSE) attempt_.host_refused = true;
    return r;
  }
  // Headers nobody will see need no holding; they are still read for status and hints.
  if (host_wants_headers()) {
    attempt_.held_headers.append(data, n);
    attempt_.held_line_ends.push_back(attempt_.held_headers.size());
  }
  note_header_line(data, n);
  if (host_wants_headers() && !attempt_.response.candidate && is_blank_line(std::string_view(data, n)) &&
      ends_our_part()) {
    switch (flush_held()) {
      case Flush::done:
        enter(Phase::committed_at_headers);
        fleet_hook::commit_success(*runtime_, host, fleet_key_, attempt_.response.status);
        break;
      case Flush::paused: break;  // the rest goes with the body or at the end, as before
      case Flush::refused: attempt_.host_refused = true; return 0;
    }
  }
  return n;
}

bool Transfer::ends_our_part() const {
  int status = attempt_.response.status;
  if (status < 200) return false;  // 1xx: the real response follows
  bool redirect = status >= 300 && status < 400;
  if (redirect && host.follow_location) {
    if (!attempt_.response.location_not_http) return false;  // libcurl goes on to the target
  } else if (!attempt_.response.no_body && status != 204 && status != 304) {
    return false;  // a body follows: it commits (or is held) as before
  }
  // A proxy's answer to CONNECT (the origin's response is still to come) or a response through
  // a tunnel: kept as before.
  long connect_code = 0;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_HTTP_CONNECTCODE, &connect_code);
  }
  return connect_code == 0;
}

void Transfer::learn_status() {
  attempt_.status_learned = true;
  long code = 0;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_RESPONSE_CODE, &code);
  }
  attempt_.response.status = static_cast<int>(code);
  // The same test as at the end of the headers on the callback path: a plain 2xx/3xx streams
  // without a header lookup or a policy lookup.
  if (core::is_final_success(attempt_.response.status)) return;
  learn_hints();
  classify_response();
}

void Transfer::classify_response() {
  resolve_request();
  ResponseHead& response = attempt_.response;
  response.candidate = core::may_retry_response(*run_.policy, response.status, response.hints.should_retry) ||
                       wants_refresh(response.status);
}

void Transfer::learn_hints() {
  if (attempt_.hints_learned || header_cb_) return;
  attempt_.hints_learned = true;
  shim::learn_hints(*api_, easy_, attempt_.response.status, attempt_.response.hints);
}

void Transfer::note_header_line(const char* data, size_t n) {
  ResponseHead& response = attempt_.response;
  if (response.note_line(std::string_view(data, n)) && response.maybe_retryable()) classify_response();
}

size_t Transfer::read(char* buffer, size_t size, size_t nitems) {
  const size_t limit = runtime_->config.settings.max_upload_replay;
  size_t r = run_.upload.read(host, buffer, size, nitems, limit);
  if (r == CURL_READFUNC_PAUSE && attempt_.response.candidate && phase() == Phase::attempting &&
      !attempt_.held_body.empty()) {
    // The response came before the host's first read, and the host pauses its upload until it
    // sees that response (curl test 1533): it gets it now, as it already would have without us,
    // and is asked again (it may have resumed the upload from its write callback).
    attempt_.response.candidate = false;
    switch (flush_held()) {
      case Flush::done:
        enter(Phase::committed);
        fleet_hook::commit_success(*runtime_, host, fleet_key_, attempt_.response.status);
        r = run_.upload.read(host, buffer, size, nitems, limit);
        break;
      case Flush::paused: break;
      case Flush::refused: attempt_.host_refused = true; return CURL_READFUNC_ABORT;
    }
  }
  attempt_.upload_paused = r == CURL_READFUNC_PAUSE;
  return r;
}

int Transfer::seek(curl_off_t offset, int origin) {
  // libcurl's own rewinds (redirects, auth): behave as libcurl would without us.
  return run_.upload.seek(host, easy_, offset, origin);
}

bool Transfer::upload_replayable() const {
  // A form's stream parts were read by the program's own callback: nothing was kept.
  return !host.form_streams() && run_.upload.replayable(host);
}

bool Transfer::rewind_upload() {
  if (!upload_replayable()) return false;
  return run_.upload.rewind(host, easy_);
}

}  // namespace curlretry::shim
