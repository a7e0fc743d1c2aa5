#include "shim/transfer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>

#include "core/ascii.h"
#include "core/cooldown.h"
#include "core/duration_text.h"
#include "shim/events.h"
#include "shim/fleet_hook.h"
#include "shim/header_lookup.h"
#include "shim/log.h"
#include "shim/proxy_layer.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/request_headers.h"
#include "shim/response_head.h"
#include "shim/runtime.h"

namespace curlretry::shim {
namespace {

using config::LogLevel;

// libcurl never hands a write callback more than this; replays use the same chunking.
constexpr size_t kChunk = CURL_MAX_WRITE_SIZE;

template <typename V>
void set_real(const real::Api& api, CURL* easy, CURLoption option, V value) {
  if (auto setopt = api.easy_setopt) {
    LibcurlScope scope(api);
    setopt(easy, option, value);
  }
}

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

Transfer::Transfer(CURL* easy, const real::Api* api) : easy_(easy), api_(api) {}

namespace {
// A fresh value built where the old one was: no temporary to build, move from and destroy, as
// `value = T{}` costs (most of the success path's cost before issue 27). Default-initialised,
// not value-initialised: every member has its initialiser, and value-initialisation would first
// zero the whole object (Attempt is 720 bytes). Safe only because building one cannot throw:
// the old one is gone by then.
template <typename T>
void renew(T& value) noexcept {
  static_assert(std::is_nothrow_default_constructible_v<T>);
  std::destroy_at(&value);
  ::new (static_cast<void*>(&value)) T;
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Lifecycle

bool Transfer::begin(const Runtime& runtime) {
  if (!runtime.active || phase() != Phase::idle) return false;
  if (!url_is_http(host.url)) {
    // Not ours: libcurl must see the host's own callbacks for this one.
    if (installed_) uninstall();
    return false;
  }
  runtime_ = &runtime;
  renew(run_);
  run_.started = Clock::now();
  run_.upload.start_mime(host.mime_body(), runtime.config.settings.max_upload_replay);
  if (host.timeout_ms > 0) run_.deadline = run_.started + std::chrono::milliseconds(host.timeout_ms);
  run_.random = core::SplitMix(static_cast<std::uint64_t>(run_.started.time_since_epoch().count()) ^
                               reinterpret_cast<std::uintptr_t>(this));
  fresh_connect_forced_ = false;
  timeout_changed_ = false;
  if (host.cookie_engine || host.shared) run_.cookies.take(*api_, easy_);
  // Installed once and left in place between transfers (the host's later setopts are recorded
  // and honoured through them): a handle reused for thousands of requests pays this once.
  if (!installed_) install();
  if (header_cb_ != wants_header_callback()) sync_header_callback();
  sync_read_callback();
  sync_socket_callback();
  reset_attempt();
  run_.attempt = 1;
  enter(Phase::attempting);
  apply_cached_credential();
  fleet_hook::count_request(runtime, host, fleet_key_);
  return true;
}

void Transfer::end() {
  if (phase() == Phase::idle) return;
  enter(Phase::idle);
  if (fresh_connect_forced_) set_real(*api_, easy_, CURLOPT_FRESH_CONNECT, static_cast<long>(host.fresh_connect));
  if (timeout_changed_) set_real(*api_, easy_, CURLOPT_TIMEOUT_MS, host.timeout_ms);
  fresh_connect_forced_ = timeout_changed_ = false;
  if (!override_.idle()) override_.restore(*api_, easy_, host);
  pending_credential_.reset();  // a command nobody waits for any more is killed
  once_per_transfer_.restore(*api_, easy_, host);
  if (attempt_.held_body.capacity() > kChunk) std::string().swap(attempt_.held_body);
  run_.upload.release();
  run_.cookies.clear();
}

void Transfer::abandon() {
  if (installed_) uninstall();
  end();
}

void Transfer::forget_install() {
  // curl_easy_reset dropped our request overrides with everything else.
  override_ = RequestOverride{};
  installed_ = false;
  header_cb_ = false;
  read_cb_ = false;
  socket_cb_ = ssl_ctx_cb_ = false;
  enter(Phase::idle);
}

void Transfer::log_phase(Phase next) const {
  // The request is named once it was matched (resolve_request()); before, it is not known yet.
  const std::string who = run_.policy != nullptr ? run_.method + " " + run_.display : std::string("a transfer");
  log::write(LogLevel::debug, "phase of " + who + ": " + std::string(to_string(phase())) + " -> " +
                                  std::string(to_string(next)) + " (attempt " + std::to_string(run_.attempt) + ")");
}

void Transfer::hold_first_attempt() {
  run_.attempt = 0;
  enter(Phase::waiting);
}

void Transfer::install() {
  set_real(*api_, easy_, CURLOPT_WRITEFUNCTION, &Transfer::on_write);
  set_real(*api_, easy_, CURLOPT_WRITEDATA, static_cast<void*>(this));
  set_real(*api_, easy_, CURLOPT_READFUNCTION, &Transfer::on_read);
  set_real(*api_, easy_, CURLOPT_READDATA, static_cast<void*>(this));
  set_real(*api_, easy_, CURLOPT_SEEKFUNCTION, &Transfer::on_seek);
  set_real(*api_, easy_, CURLOPT_SEEKDATA, static_cast<void*>(this));
  // Headers reach the host through us, so CURLOPT_HEADER is emulated rather than left on.
  set_real(*api_, easy_, CURLOPT_HEADER, 0L);
  installed_ = true;
  read_cb_ = true;
}

void apply_host_callbacks(const real::Api& api, CURL* easy, const HostOptions& host) {
  set_real(api, easy, CURLOPT_WRITEFUNCTION, host.write_fn);
  set_real(api, easy, CURLOPT_WRITEDATA, host.write_data);
  set_real(api, easy, CURLOPT_HEADERFUNCTION, host.header_fn);
  set_real(api, easy, CURLOPT_HEADERDATA, host.header_data);
  set_real(api, easy, CURLOPT_READFUNCTION, host.read_fn);
  set_real(api, easy, CURLOPT_READDATA, host.read_data);
  set_real(api, easy, CURLOPT_SEEKFUNCTION, host.seek_fn);
  set_real(api, easy, CURLOPT_SEEKDATA, host.seek_data);
  set_real(api, easy, CURLOPT_HEADER, static_cast<long>(host.include_header));
  set_real(api, easy, CURLOPT_OPENSOCKETFUNCTION, host.opensocket_fn);
  set_real(api, easy, CURLOPT_OPENSOCKETDATA, host.opensocket_data);
  set_real(api, easy, CURLOPT_SSL_CTX_FUNCTION, host.ssl_ctx_fn);
  set_real(api, easy, CURLOPT_SSL_CTX_DATA, host.ssl_ctx_data);
  // Taken off for a retry (OncePerTransfer): a handle duplicated meanwhile gets it back too.
  if (host.hsts_read_fn) set_real(api, easy, CURLOPT_HSTSREADFUNCTION, host.hsts_read_fn);
}

void Transfer::uninstall() {
  apply_host_callbacks(*api_, easy_, host);
  installed_ = false;
  header_cb_ = false;
  read_cb_ = false;
  socket_cb_ = ssl_ctx_cb_ = false;
}

void Transfer::sync_read_callback() {
  bool want = !host.form_streams();
  if (want && read_cb_) return;
  if (want) {
    set_real(*api_, easy_, CURLOPT_READFUNCTION, &Transfer::on_read);
    set_real(*api_, easy_, CURLOPT_READDATA, static_cast<void*>(this));
  } else {
    // Set every time: the program may have changed its callback since the last form.
    set_real(*api_, easy_, CURLOPT_READFUNCTION, host.read_fn);
    set_real(*api_, easy_, CURLOPT_READDATA, host.read_data);
  }
  read_cb_ = want;
}

void Transfer::sync_header_callback() {
  bool want = wants_header_callback();
  if (want == header_cb_) return;
  if (want) {
    set_real(*api_, easy_, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
    set_real(*api_, easy_, CURLOPT_HEADERDATA, static_cast<void*>(this));
  } else {
    // The host reads no headers: its own (empty) settings go back, and libcurl calls no one.
    set_real(*api_, easy_, CURLOPT_HEADERFUNCTION, host.header_fn);
    set_real(*api_, easy_, CURLOPT_HEADERDATA, host.header_data);
  }
  header_cb_ = want;
}

void Transfer::reset_attempt() {
  // The held body's buffer (at most kChunk, see end()) is kept: a handle that holds a stream's
  // setup events on every request allocates it once.
  std::string body = std::move(attempt_.held_body);
  body.clear();
  renew(attempt_);
  attempt_.held_body = std::move(body);
  unpause_requested_.store(false, std::memory_order_relaxed);
}

void Transfer::prepare_next_attempt() {
  run_.heartbeat.disarm();
  ++run_.attempt;
  reset_attempt();
  enter(Phase::attempting);
  run_.cookies.restore(*api_, easy_);
  once_per_transfer_.before_retry(*api_, easy_, host);
  // A transport error may have left a poisoned connection in the pool: use a new one, once.
  if (run_.last_transport_error && !host.fresh_connect) {
    set_real(*api_, easy_, CURLOPT_FRESH_CONNECT, 1L);
    fresh_connect_forced_ = true;
  } else if (fresh_connect_forced_) {
    set_real(*api_, easy_, CURLOPT_FRESH_CONNECT, static_cast<long>(host.fresh_connect));
    fresh_connect_forced_ = false;
  }
  if (!override_.empty()) override_.apply(*api_, easy_, host);
  if (run_.deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*run_.deadline - Clock::now()).count();
    set_real(*api_, easy_, CURLOPT_TIMEOUT_MS, static_cast<long>(left > 1 ? left : 1));
    timeout_changed_ = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Delivery to the host, the way libcurl would do it without us.

size_t Transfer::host_write(const char* data, size_t n) {
  HostScope scope;
  char* p = const_cast<char*>(data);
  if (host.write_fn) return host.write_fn(p, 1, n, host.write_data);
  return std::fwrite(p, 1, n, static_cast<FILE*>(host.write_data));
}

size_t Transfer::deliver_header_line(const char* data, size_t n, WriteRefusal::By* by) {
  // libcurl's order: the body stream first (CURLOPT_HEADER), then the header callback, which
  // falls back to the write callback when only CURLOPT_HEADERDATA was set. `by`: which of them
  // had the line when it returned.
  if (by) *by = WriteRefusal::By::body;
  if (host.include_header) {
    size_t r = host_write(data, n);
    if (r != n) return r;
  }
  if (by) *by = WriteRefusal::By::header;
  HostScope scope;
  char* p = const_cast<char*>(data);
  if (host.header_fn) return host.header_fn(p, 1, n, host.header_data);
  if (host.header_data) {
    if (host.write_fn) return host.write_fn(p, 1, n, host.header_data);
    return std::fwrite(p, 1, n, static_cast<FILE*>(host.header_data));
  }
  return n;
}

Transfer::Flush Transfer::flush_held() {
  // A program that refused a line is never handed another one (nor the same one again).
  if (attempt_.held_refusal.refused()) return Flush::refused;
  WriteRefusal::By by = WriteRefusal::By::none;
  while (attempt_.flushed_lines < attempt_.held_line_ends.size()) {
    size_t begin = attempt_.flushed_lines == 0 ? 0 : attempt_.held_line_ends[attempt_.flushed_lines - 1];
    size_t n = attempt_.held_line_ends[attempt_.flushed_lines] - begin;
    size_t r = deliver_header_line(attempt_.held_headers.data() + begin, n, &by);
    if (r == CURL_WRITEFUNC_PAUSE) return Flush::paused;
    if (r != n) return refused_held(by, n, r);
    ++attempt_.flushed_lines;
  }
  while (attempt_.flushed_body < attempt_.held_body.size()) {
    size_t n = std::min(kChunk, attempt_.held_body.size() - attempt_.flushed_body);
    size_t r = host_write(attempt_.held_body.data() + attempt_.flushed_body, n);
    if (r == CURL_WRITEFUNC_PAUSE) return Flush::paused;
    if (r != n) return refused_held(WriteRefusal::By::body, n, r);
    attempt_.flushed_body += n;
  }
  return Flush::done;
}

Transfer::Flush Transfer::refused_held(WriteRefusal::By by, size_t passed, size_t returned) {
  attempt_.held_refusal = WriteRefusal{by, passed, returned};
  attempt_.host_refused = true;
  return Flush::refused;
}

Transfer::Step Transfer::end_refused() {
  // What libcurl reports when the callback refuses the data itself (lib/sendf.c): the code, and
  // its text in the program's error buffer, where libcurl wrote the text of our own stop, or none.
  report_refusal(*api_, attempt_.held_refusal, host.error_buffer);
  attempt_.replay_code = CURLE_WRITE_ERROR;
  enter(Phase::done);
  return Step{false, core::Millis{0}, CURLE_WRITE_ERROR};
}

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
  response.candidate =
      core::may_retry_response(*run_.policy, response.status, response.hints.should_retry) || wants_refresh(response.status);
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
    run_.single_attempt = *run_.policy;
    run_.single_attempt->max_attempts = 1;
    run_.policy = &*run_.single_attempt;
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
    } else if (core::is_final_success(attempt_.response.status)) {
      fleet_hook::count_success(*runtime_, host, fleet_key_);  // credit; ends a cooldown
    }
    enter(Phase::done);
    return Step{false, core::Millis{0}, code};
  }
  core::Verdict verdict = attempt_.early_verdict ? *attempt_.early_verdict : decide_now(code);
  if (verdict.action == core::Action::retry && phase() == Phase::committed_at_headers) {
    verdict.action = core::Action::give_up;  // the host has its headers: nothing to take back
    verdict.reason = core::Reason::committed;
  }
  // Before the rewind: a transfer the fleet stops leaves the host's upload stream alone.
  settle_with_fleet(verdict);
  refresh_credential(verdict);
  if (verdict.action == core::Action::retry && !rewind_upload()) {
    verdict.action = core::Action::give_up;
    verdict.reason = core::Reason::not_replayable;
  }
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

void Transfer::settle_with_fleet(core::Verdict& verdict) {
  auto now = Clock::now();
  std::optional<core::Millis> left =
      run_.policy->max_elapsed - std::chrono::duration_cast<core::Millis>(now - run_.started);
  if (run_.deadline) left = std::min(*left, std::chrono::duration_cast<core::Millis>(*run_.deadline - now));
  const auto& response = attempt_.response;
  fleet_hook::Attempt attempt{
      api_, easy_, &host, run_.policy, response.status, &response.hints, left, run_.attempt, &fleet_key_};
  const core::Millis planned = verdict.delay;
  fleet_hook::settle(*runtime_, attempt, verdict);
  // The recovery wake leaves a server's stated wait alone (fleet_hook::note_parked).
  fleet_key_.server_wait = !verdict.server_wait_header.empty() || verdict.delay > planned;
  if (verdict.action != core::Action::retry) return;
  // A cooldown's wait counts towards retry_after.max_ms in all; the token wait is per retry.
  if (verdict.delay > planned) run_.fleet_waited.cooldown += verdict.delay - planned;
  run_.fleet_waited.token = core::Millis{0};
}

Transfer::Step Transfer::resume_replay() {
  unpause_requested_.store(false, std::memory_order_release);
  Step step{false, core::Millis{0}, attempt_.replay_code};
  switch (flush_held()) {
    case Flush::done: enter(Phase::done); break;
    case Flush::paused:
      step.paused = true;
      replay_thread_.store(std::this_thread::get_id(), std::memory_order_release);
      enter(Phase::replay_paused);
      break;
    case Flush::refused: return end_refused();
  }
  return step;
}

CURLcode Transfer::unpause_replay() {
  const CURLcode code = attempt_.replay_code;
  resume_replay();
  if (!attempt_.held_refusal.refused()) return CURLE_OK;
  // libcurl (7.88, lib/easy.c) answers this call with the callback's refusal of the pending
  // data, its text in the error buffer (end_refused() wrote it), and drops that data: the
  // transfer is not stopped, what follows reaches the program after this call, and it ends
  // with its own result.
  const WriteRefusal refused = attempt_.held_refusal;
  if (refused.by == WriteRefusal::By::body && attempt_.flushed_lines == attempt_.held_line_ends.size())
    attempt_.flushed_body += refused.passed;
  else
    ++attempt_.flushed_lines;
  attempt_.held_refusal = WriteRefusal{};
  attempt_.host_refused = false;
  attempt_.replay_code = code;
  replay_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  request_unpause();
  enter(Phase::replay_paused);
  return CURLE_WRITE_ERROR;
}

bool Transfer::replay_progress_continue() {
  // libcurl counts body bytes as it reads them, and calls the program's write callback with what
  // it read: a program that paused on a chunk has had the count up to the end of that chunk
  // (nothing while the headers are still being handed over). The totals are libcurl's own.
  curl_off_t dltotal = 0, dlnow = 0, ultotal = 0, ulnow = 0;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &dltotal);
    getinfo(easy_, CURLINFO_SIZE_DOWNLOAD_T, &dlnow);
    getinfo(easy_, CURLINFO_CONTENT_LENGTH_UPLOAD_T, &ultotal);
    getinfo(easy_, CURLINFO_SIZE_UPLOAD_T, &ulnow);
  }
  const bool in_headers = attempt_.flushed_lines < attempt_.held_line_ends.size();
  const size_t pending = std::min(kChunk, attempt_.held_body.size() - attempt_.flushed_body);
  const auto seen = in_headers ? curl_off_t{0} : static_cast<curl_off_t>(attempt_.flushed_body + pending);
  if (host_progress_continue(std::max<curl_off_t>(dltotal, 0), std::clamp<curl_off_t>(dlnow, 0, seen),
                             std::max<curl_off_t>(ultotal, 0), std::max<curl_off_t>(ulnow, 0)))
    return true;
  replay_aborted();
  return false;
}

CURLcode Transfer::replay_aborted() {
  // What libcurl reports when a progress callback aborts (lib/progress.c).
  if (host.error_buffer) std::snprintf(host.error_buffer, CURL_ERROR_SIZE, "Callback aborted");
  attempt_.replay_code = CURLE_ABORTED_BY_CALLBACK;
  enter(Phase::done);
  return CURLE_ABORTED_BY_CALLBACK;
}

CURLcode Transfer::aborted_during_backoff() {
  if (host.error_buffer) std::snprintf(host.error_buffer, CURL_ERROR_SIZE, "Callback aborted");
  log::write(LogLevel::info,
             run_.method + " " + run_.display + ": the host aborted during the retry wait after " + attempts_label());
  return CURLE_ABORTED_BY_CALLBACK;
}

bool Transfer::host_progress_continue() { return host_progress_continue(0, 0, 0, 0); }

bool Transfer::host_progress_continue(curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
  if (host.noprogress) return true;
  HostScope scope;
  if (host.xferinfo_fn) {
    int r = host.xferinfo_fn(host.progress_data, dltotal, dlnow, ultotal, ulnow);
    return r == 0 || r == CURL_PROGRESSFUNC_CONTINUE;
  }
  if (host.progress_fn) {
    int r = host.progress_fn(host.progress_data, static_cast<double>(dltotal), static_cast<double>(dlnow),
                             static_cast<double>(ultotal), static_cast<double>(ulnow));
    return r == 0 || r == CURL_PROGRESSFUNC_CONTINUE;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Log lines: method, host and path only (no userinfo, no query), what happened, the decision.

std::string Transfer::attempts_label() const {
  return std::to_string(run_.attempt) + (run_.attempt == 1 ? " attempt" : " attempts");
}

void Transfer::log_retry(const core::Verdict& verdict) const {
  if (!log::enabled(LogLevel::info)) return;
  std::string max = run_.policy->max_attempts < 0 ? "unlimited" : std::to_string(run_.policy->max_attempts);
  // A wait the server asked for says so: it is not curlretry's backoff.
  const std::string why = verdict.server_wait_header.empty() ? "" : " (" + verdict.server_wait_header + ")";
  log::write(LogLevel::info, run_.method + " " + run_.display + " -> " + verdict.what + ": retrying in " +
                                 core::human_duration(verdict.delay) + why + " (attempt " +
                                 std::to_string(run_.attempt) + "/" + max + ")");
}

void Transfer::record_event(const core::Verdict& verdict, CURLcode code) const {
  if (!events::enabled()) return;
  curl_off_t bytes = 0;
  long response_code = 0;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_SIZE_DOWNLOAD_T, &bytes);
    getinfo(easy_, CURLINFO_RESPONSE_CODE, &response_code);
  }
  events::Event e;
  e.method = run_.method;
  e.host = run_.host;
  e.path = run_.path;
  e.attempt = run_.attempt;
  e.status = status_seen(attempt_.response.status, response_code);
  e.outcome = verdict.what;
  e.retry = verdict.action == core::Action::retry;
  e.success = !e.retry && code == CURLE_OK && core::is_final_success(e.status);
  e.reason = verdict.reason;
  e.reason_detail = verdict.reason_detail;
  e.delay_ms = verdict.delay.count();
  e.bytes = static_cast<long long>(bytes);
  e.rule = run_.rule_name;
  e.fallback = run_.fallback.label();
  events::record(e);
}

void Transfer::log_final(const core::Verdict& verdict, int) const {
  // A first attempt that ends the transfer is what the host would have seen anyway: debug (-v)
  // only, unless curlretry itself chose not to retry something it otherwise would have. Any
  // other give-up is a failure the host now sees: warn, so CURLRETRY_LOG=warn means "quiet
  // unless it failed".
  using core::Reason;
  const Reason reason = verdict.reason;
  const bool success = reason == Reason::success || reason == Reason::committed;
  // A limit of curlretry's own that stopped a retry says so even on a first attempt.
  const bool declined = reason == Reason::retry_after_too_long || reason == Reason::not_replayable ||
                        reason == Reason::deadline || reason == Reason::max_elapsed || reason == Reason::budget ||
                        reason == Reason::cooldown;
  const bool quiet = run_.attempt == 1 && !declined;
  const LogLevel level = quiet ? LogLevel::debug : success ? LogLevel::info : LogLevel::warn;
  if (!log::enabled(level)) return;
  std::string line = run_.method + " " + run_.display + " -> " + verdict.what;
  if (success) {
    line += " after " + attempts_label();
  } else {
    // The server's value, the cap and the key that sets it: what to change if the wait is fine.
    if (reason == Reason::retry_after_too_long) {
      line += " (server asked for " + core::human_duration(verdict.server_wait) + " > retry_after.max_ms " +
              core::human_duration(run_.policy->max_retry_after) + ")";
    }
    line += ": giving up after " + attempts_label() + " (" + core::reason_text(verdict) + ")";
  }
  log::write(level, line);
}

}  // namespace curlretry::shim
