#include "shim/transfer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "config/text.h"
#include "core/cooldown.h"
#include "core/duration_text.h"
#include "shim/events.h"
#include "shim/fleet_hook.h"
#include "shim/log.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/request_headers.h"
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

bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char a = line[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (a != name[i]) return false;
  }
  return true;
}

using config::text::trim;

// The value of header `name` (lower case) if `line` is that header.
std::optional<std::string> header_value(std::string_view line, std::string_view name) {
  if (!iequals_prefix(line, name) || line.size() <= name.size() || line[name.size()] != ':') return std::nullopt;
  return std::string(trim(line.substr(name.size() + 1)));
}

// "HTTP/1.1 503 Service Unavailable" -> 503; 0 when the line is not a status line.
int status_of(std::string_view line) {
  if (line.size() < 12 || line.substr(0, 5) != "HTTP/") return 0;
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos || sp + 4 > line.size()) return 0;
  int status = 0;
  for (size_t i = sp + 1; i < sp + 4; ++i) {
    if (line[i] < '0' || line[i] > '9') return 0;
    status = status * 10 + (line[i] - '0');
  }
  return status;
}

bool is_blank_line(const char* data, size_t n) {
  return (n == 2 && data[0] == '\r' && data[1] == '\n') || (n == 1 && data[0] == '\n');
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

// ---------------------------------------------------------------------------------------------
// Lifecycle

bool Transfer::begin(const Runtime& runtime) {
  if (!runtime.active || running_) return false;
  if (!url_is_http(host.url)) {
    // Not ours: libcurl must see the host's own callbacks for this one.
    if (installed_) uninstall();
    return false;
  }
  running_ = true;
  runtime_ = &runtime;
  policy_ = nullptr;
  rule_ = nullptr;
  attempt_ = 0;
  started_ = Clock::now();
  deadline_.reset();
  if (host.timeout_ms > 0) deadline_ = started_ + std::chrono::milliseconds(host.timeout_ms);
  previous_delay_ = core::Millis{0};
  random_ = core::SplitMix(static_cast<std::uint64_t>(started_.time_since_epoch().count()) ^
                           reinterpret_cast<std::uintptr_t>(this));
  fresh_connect_forced_ = false;
  timeout_changed_ = false;
  last_transport_error_ = false;
  upload_.start();
  cookies_.clear();
  if (host.cookie_engine || host.shared) cookies_.take(*api_, easy_);
  fallback_.reset();
  auth_tried_ = false;
  fleet_extended_ = core::Millis{0};
  // Installed once and left in place between transfers (the host's later setopts are recorded
  // and honoured through them): a handle reused for thousands of requests pays this once.
  if (!installed_) install();
  sync_header_callback();
  sync_read_callback();
  reset_attempt();
  attempt_ = 1;
  apply_cached_credential();
  fleet_hook::count_request(runtime, host, fleet_key_);
  return true;
}

void Transfer::end() {
  if (!running_) return;
  running_ = false;
  if (fresh_connect_forced_) set_real(*api_, easy_, CURLOPT_FRESH_CONNECT, static_cast<long>(host.fresh_connect));
  if (timeout_changed_) set_real(*api_, easy_, CURLOPT_TIMEOUT_MS, host.timeout_ms);
  fresh_connect_forced_ = timeout_changed_ = false;
  override_.restore(*api_, easy_, host);
  pending_credential_.reset();  // a command nobody waits for any more is killed
  once_per_transfer_.restore(*api_, easy_, host);
  if (held_body_.capacity() > kChunk) std::string().swap(held_body_);
  upload_.release();
  cookies_.clear();
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
  running_ = false;
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
  // Taken off for a retry (OncePerTransfer): a handle duplicated meanwhile gets it back too.
  if (host.hsts_read_fn) set_real(api, easy, CURLOPT_HSTSREADFUNCTION, host.hsts_read_fn);
}

void Transfer::uninstall() {
  apply_host_callbacks(*api_, easy_, host);
  installed_ = false;
  header_cb_ = false;
  read_cb_ = false;
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
  bool want = host_wants_headers() || api_->easy_header == nullptr;
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
  response_ = Response{};
  held_headers_.clear();
  held_line_ends_.clear();
  flushed_lines_ = 0;
  held_body_.clear();
  flushed_body_ = 0;
  committed_ = false;
  committed_at_headers_ = false;
  status_learned_ = false;
  hints_learned_ = false;
  host_refused_ = false;
  upload_paused_ = false;
  early_verdict_.reset();
  stream_hold_.reset();
  replay_paused_ = false;
  unpause_requested_.store(false, std::memory_order_relaxed);
}

void Transfer::prepare_next_attempt() {
  heartbeat_.disarm();
  ++attempt_;
  reset_attempt();
  cookies_.restore(*api_, easy_);
  once_per_transfer_.before_retry(*api_, easy_, host);
  // A transport error may have left a poisoned connection in the pool: use a new one, once.
  if (last_transport_error_ && !host.fresh_connect) {
    set_real(*api_, easy_, CURLOPT_FRESH_CONNECT, 1L);
    fresh_connect_forced_ = true;
  } else if (fresh_connect_forced_) {
    set_real(*api_, easy_, CURLOPT_FRESH_CONNECT, static_cast<long>(host.fresh_connect));
    fresh_connect_forced_ = false;
  }
  if (!override_.empty()) override_.apply(*api_, easy_, host);
  if (deadline_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
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

size_t Transfer::deliver_header_line(const char* data, size_t n) {
  // libcurl's order: the body stream first (CURLOPT_HEADER), then the header callback, which
  // falls back to the write callback when only CURLOPT_HEADERDATA was set.
  if (host.include_header) {
    size_t r = host_write(data, n);
    if (r != n) return r;
  }
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
  while (flushed_lines_ < held_line_ends_.size()) {
    size_t begin = flushed_lines_ == 0 ? 0 : held_line_ends_[flushed_lines_ - 1];
    size_t n = held_line_ends_[flushed_lines_] - begin;
    size_t r = deliver_header_line(held_headers_.data() + begin, n);
    if (r != n) return r == CURL_WRITEFUNC_PAUSE ? Flush::paused : Flush::refused;
    ++flushed_lines_;
  }
  while (flushed_body_ < held_body_.size()) {
    size_t n = std::min(kChunk, held_body_.size() - flushed_body_);
    size_t r = host_write(held_body_.data() + flushed_body_, n);
    if (r != n) return r == CURL_WRITEFUNC_PAUSE ? Flush::paused : Flush::refused;
    flushed_body_ += n;
  }
  return Flush::done;
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
  if (committed_) return host_write(data, n);
  if (!header_cb_ && !status_learned_) learn_status();
  // A host that paused its upload may be waiting for this very body to resume it (curl test
  // 1533: a 401 answered before the upload): holding it would deadlock the transfer.
  if (response_.candidate && upload_paused_) response_.candidate = false;
  if (!response_.candidate) {
    if (size_t r = 0; hold_stream(data, n, r)) return r;
    // A response that cannot be retried: the first body byte (of a 2xx event stream: the first
    // content event) commits the transfer.
    switch (flush_held()) {
      case Flush::done: break;
      case Flush::paused: return CURL_WRITEFUNC_PAUSE;  // libcurl offers this chunk again later
      case Flush::refused: host_refused_ = true; return 0;
    }
    committed_ = true;
    size_t r = host_write(data, n);
    if (r != n && r != CURL_WRITEFUNC_PAUSE) host_refused_ = true;
    return r;
  }
  if (held_body_.size() + n <= runtime_->config.settings.max_error_body) {
    held_body_.append(data, n);
    return n;
  }
  // The held body outgrew its bound: decide with what we have rather than hold forever.
  core::Verdict verdict = decide_now(CURLE_OK);
  if (verdict.action == core::Action::retry) {
    early_verdict_ = verdict;
    return 0;  // our own abort of this attempt; libcurl reports CURLE_WRITE_ERROR
  }
  response_.candidate = false;
  return write(data, n);
}

size_t Transfer::header(char* data, size_t n) {
  if (committed_) {
    if (!host_wants_headers()) return n;
    size_t r = deliver_header_line(data, n);
    if (r != n) host_refused_ = true;
    return r;
  }
  // Headers nobody will see need no holding; they are still read for status and hints.
  if (host_wants_headers()) {
    held_headers_.append(data, n);
    held_line_ends_.push_back(held_headers_.size());
  }
  note_header_line(data, n);
  if (host_wants_headers() && !response_.candidate && is_blank_line(data, n) && ends_our_part()) {
    switch (flush_held()) {
      case Flush::done: committed_ = committed_at_headers_ = true; break;
      case Flush::paused: break;  // the rest goes with the body or at the end, as before
      case Flush::refused: host_refused_ = true; return 0;
    }
  }
  return n;
}

bool Transfer::ends_our_part() const {
  int status = response_.status;
  if (status < 200) return false;  // 1xx: the real response follows
  bool redirect = status >= 300 && status < 400;
  if (redirect && host.follow_location) {
    if (!response_.location_not_http) return false;  // libcurl goes on to the target
  } else if (!response_.no_body && status != 204 && status != 304) {
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
  status_learned_ = true;
  long code = 0;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_RESPONSE_CODE, &code);
  }
  response_.status = static_cast<int>(code);
  // The same test as at the end of the headers on the callback path: a plain 2xx/3xx streams
  // without a header lookup or a policy lookup.
  if (response_.status >= 200 && response_.status < 400) return;
  learn_hints();
  resolve_request();
  response_.candidate =
      core::may_retry_response(*policy_, response_.status, response_.should_retry) || wants_refresh(response_.status);
}

void Transfer::learn_hints() {
  if (hints_learned_ || header_cb_) return;
  hints_learned_ = true;
  // The first of a repeated header, as on the callback path and in `curlretry explain`.
  response_.retry_after = libcurl_header("Retry-After");
  response_.retry_after_ms = libcurl_header("Retry-After-Ms");
  response_.should_retry = libcurl_header("X-Should-Retry");
}

std::optional<std::string> Transfer::libcurl_header(const char* name) const {
  auto header = api_->easy_header;
  if (header == nullptr) return std::nullopt;
  struct curl_header* h = nullptr;
  CURLHcode found;
  {
    LibcurlScope scope(*api_);
    // The last request of this transfer (after redirects), its own headers (no 1xx, no trailers).
    found = header(easy_, name, 0, CURLH_HEADER, -1, &h);
  }
  if (found != CURLHE_OK || h == nullptr || h->value == nullptr) return std::nullopt;
  return std::string(trim(h->value));
}

void Transfer::note_header_line(const char* data, size_t n) {
  std::string_view line(data, n);
  if (int status = status_of(line); status != 0) {
    response_ = Response{};
    response_.status = status;
    return;
  }
  if (is_blank_line(data, n)) {
    // Only a failure status or a server hint can make a response retryable: a plain 2xx/3xx
    // streams at once without even a policy lookup (the success path stays cheap).
    bool maybe = response_.status >= 400 || response_.status == 0 || response_.should_retry.has_value();
    if (maybe) {
      resolve_request();
      response_.candidate = core::may_retry_response(*policy_, response_.status, response_.should_retry) ||
                            wants_refresh(response_.status);
    }
    return;
  }
  char first = line.empty() ? '\0' : static_cast<char>(line[0] | 0x20);
  if (first == 'c' || first == 'l') {
    if (auto length = header_value(line, "content-length")) {
      response_.no_body = *length == "0";
    } else if (auto location = header_value(line, "location")) {
      response_.location_not_http = location->find("://") != std::string::npos && !url_is_http(*location);
    }
    return;
  }
  if (first != 'r' && first != 'x') return;  // the only headers the decision reads
  // A repeated header counts once, the first one, as `curlretry explain` reads it.
  if (auto v = header_value(line, "retry-after")) {
    if (!response_.retry_after) response_.retry_after = std::move(v);
  } else if (auto w = header_value(line, "retry-after-ms")) {
    if (!response_.retry_after_ms) response_.retry_after_ms = std::move(w);
  } else if (auto x = header_value(line, "x-should-retry")) {
    if (!response_.should_retry) response_.should_retry = std::move(x);
  }
}

size_t Transfer::read(char* buffer, size_t size, size_t nitems) {
  const size_t limit = runtime_->config.settings.max_upload_replay;
  size_t r = upload_.read(host, buffer, size, nitems, limit);
  if (r == CURL_READFUNC_PAUSE && response_.candidate && !committed_ && !held_body_.empty()) {
    // The response came before the host's first read, and the host pauses its upload until it
    // sees that response (curl test 1533): it gets it now, as it already would have without us,
    // and is asked again (it may have resumed the upload from its write callback).
    response_.candidate = false;
    switch (flush_held()) {
      case Flush::done:
        committed_ = true;
        r = upload_.read(host, buffer, size, nitems, limit);
        break;
      case Flush::paused: break;
      case Flush::refused: host_refused_ = true; return CURL_READFUNC_ABORT;
    }
  }
  upload_paused_ = r == CURL_READFUNC_PAUSE;
  return r;
}

int Transfer::seek(curl_off_t offset, int origin) {
  // libcurl's own rewinds (redirects, auth): behave as libcurl would without us.
  return upload_.seek(host, easy_, offset, origin);
}

bool Transfer::upload_replayable() const {
  // A form's stream parts were read by the program's own callback: nothing was kept.
  return !host.form_streams() && upload_.replayable(host);
}

bool Transfer::rewind_upload() {
  if (!upload_replayable()) return false;
  return upload_.rewind(host, easy_);
}

// ---------------------------------------------------------------------------------------------
// Classification

void Transfer::resolve_request() {
  if (policy_ != nullptr) return;
  const char* url = nullptr;
  const char* method = nullptr;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_EFFECTIVE_URL, &url);
    if (getinfo(easy_, CURLINFO_EFFECTIVE_METHOD, &method) != CURLE_OK) method = nullptr;
  }
  UrlParts parts = split_url(url ? url : host.url);
  method_ = method ? method : "GET";
  display_ = parts.display();
  host_ = parts.host;
  path_ = parts.path;
  // Header rules need the program's header list; a config without them never reads it.
  config::RequestHeaders headers;
  const bool by_header = runtime_->config.has_header_rules();
  if (by_header) headers = read_request_headers(host.http_header);
  const config::Rule* rule = runtime_->config.match(method_, parts.host, parts.path, by_header ? &headers : nullptr);
  rule_ = rule;
  policy_ = rule ? &rule->policy : &runtime_->config.defaults;
  rule_name_ = rule ? rule->name : "defaults";
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
  if (code == CURLE_WRITE_ERROR && !host_refused_) o.transport = core::Transport::ok;  // our own stop
  o.status = response_.status != 0 ? response_.status : static_cast<int>(response_code);
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
  o.retry_after = response_.retry_after;
  o.retry_after_ms = response_.retry_after_ms;
  o.should_retry = response_.should_retry;
  o.body_prefix = held_body_.substr(0, policy_->body_window);
  o.stream_error = stream_hold_.error_data();
  o.stream_error_event = stream_hold_.error_event();
  // A response delivered at the end of its headers had no body to hold: the decision (and its log
  // line) is the one it had when it was delivered at the end of the attempt.
  o.committed = committed_ && !committed_at_headers_;
  o.replayable = upload_replayable();
  o.unsafe_method = method_ == "POST" || method_ == "PATCH";
  o.attempt = attempt_;
  auto now = Clock::now();
  o.elapsed = std::chrono::duration_cast<core::Millis>(now - started_);
  if (deadline_) o.remaining = std::chrono::duration_cast<core::Millis>(*deadline_ - now);
  o.previous_delay = previous_delay_;
  return o;
}

core::Verdict Transfer::decide_now(CURLcode code) {
  resolve_request();
  learn_hints();  // a response without a body byte never went through learn_status()
  core::Outcome o = outcome(code);
  return core::decide(*policy_, o, random_, std::chrono::system_clock::now());
}

Transfer::Step Transfer::finish_attempt(CURLcode code) {
  // The common case: a first attempt whose body already reached the host. Nothing to decide
  // (unless the attempt log wants a line for it).
  // -v (debug) also logs a first-try success. (A response delivered at the end of its headers
  // still gets its final log line, as it did when it was delivered here.)
  if (committed_ && !committed_at_headers_ && attempt_ == 1 && !events::enabled() && !early_verdict_ &&
      !log::enabled(LogLevel::debug)) {
    // Not retried here, but the server may have asked the whole fleet to back off.
    if (core::cooldown::cools_fleet(response_.status) && fleet_hook::active(*runtime_)) {
      resolve_request();
      learn_hints();
      core::Verdict delivered;
      settle_with_fleet(delivered);
    }
    return Step{false, core::Millis{0}, code};
  }
  core::Verdict verdict = early_verdict_ ? *early_verdict_ : decide_now(code);
  if (verdict.action == core::Action::retry && committed_at_headers_) {
    verdict.action = core::Action::give_up;  // the host has its headers: nothing to take back
    verdict.reason = "committed";
  }
  // Before the rewind: a transfer the fleet stops leaves the host's upload stream alone.
  settle_with_fleet(verdict);
  refresh_credential(verdict);
  if (verdict.action == core::Action::retry && !rewind_upload()) {
    verdict.action = core::Action::give_up;
    verdict.reason = "not-replayable";
  }
  record_event(verdict, code);
  if (verdict.action == core::Action::retry) {
    if (verdict.reason != "auth-refresh") log_retry(verdict);  // refresh_credential() said it
    last_transport_error_ = code != CURLE_OK && code != CURLE_HTTP_RETURNED_ERROR && code != CURLE_WRITE_ERROR;
    arm_heartbeat(verdict);
    note_overload();
    previous_delay_ = verdict.delay;
    return Step{true, verdict.delay, code};
  }
  log_final(verdict, response_.status);
  if (committed_) return Step{false, core::Millis{0}, code};
  // Give up: the host now sees the held response byte for byte, as without the shim.
  replay_code_ = code;
  return resume_replay();
}

core::Millis Transfer::fleet_wait_more() {
  if (runtime_ == nullptr || policy_ == nullptr) return core::Millis{0};
  const core::Millis more = fleet_hook::cooling_left(*runtime_, host);
  if (more.count() == 0) return more;
  // A cooldown raised over and over (every new request told "come back in 1 s") is waited out
  // for as long as one server wait may last (retry_after.max_ms), then the retry goes.
  if (fleet_extended_ + more > policy_->max_retry_after) return core::Millis{0};
  const auto now = Clock::now();
  core::Millis left = policy_->max_elapsed - std::chrono::duration_cast<core::Millis>(now - started_);
  if (deadline_) left = std::min(left, std::chrono::duration_cast<core::Millis>(*deadline_ - now));
  if (more >= left) return core::Millis{0};
  fleet_extended_ += more;
  return more;
}

void Transfer::settle_with_fleet(core::Verdict& verdict) {
  auto now = Clock::now();
  std::optional<core::Millis> left = policy_->max_elapsed - std::chrono::duration_cast<core::Millis>(now - started_);
  if (deadline_) left = std::min(*left, std::chrono::duration_cast<core::Millis>(*deadline_ - now));
  fleet_hook::Attempt attempt{api_, easy_, &host, policy_, response_.status, &response_.retry_after,
                              &response_.retry_after_ms, left, &fleet_key_};
  fleet_hook::settle(*runtime_, attempt, verdict);
}

Transfer::Step Transfer::resume_replay() {
  unpause_requested_.store(false, std::memory_order_release);
  Step step{false, core::Millis{0}, replay_code_};
  switch (flush_held()) {
    case Flush::done: replay_paused_ = false; break;
    case Flush::paused: replay_paused_ = step.paused = true; break;
    case Flush::refused: replay_paused_ = false; step.code = CURLE_WRITE_ERROR; break;
  }
  return step;
}

CURLcode Transfer::aborted_during_backoff() {
  if (host.error_buffer) std::snprintf(host.error_buffer, CURL_ERROR_SIZE, "Callback aborted");
  log::write(LogLevel::info, method_ + " " + display_ + ": the host aborted during the retry wait after " +
                                 attempts_label());
  return CURLE_ABORTED_BY_CALLBACK;
}

bool Transfer::host_progress_continue() {
  if (host.noprogress) return true;
  HostScope scope;
  if (host.xferinfo_fn) {
    int r = host.xferinfo_fn(host.progress_data, 0, 0, 0, 0);
    return r == 0 || r == CURL_PROGRESSFUNC_CONTINUE;
  }
  if (host.progress_fn) {
    int r = host.progress_fn(host.progress_data, 0, 0, 0, 0);
    return r == 0 || r == CURL_PROGRESSFUNC_CONTINUE;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Log lines: method, host and path only (no userinfo, no query), what happened, the decision.

std::string Transfer::attempts_label() const {
  return std::to_string(attempt_) + (attempt_ == 1 ? " attempt" : " attempts");
}

void Transfer::log_retry(const core::Verdict& verdict) const {
  if (!log::enabled(LogLevel::info)) return;
  std::string max = policy_->max_attempts < 0 ? "unlimited" : std::to_string(policy_->max_attempts);
  // A wait the server asked for says so: it is not curlretry's backoff.
  const std::string why = verdict.server_wait_header.empty() ? "" : " (" + verdict.server_wait_header + ")";
  log::write(LogLevel::info, method_ + " " + display_ + " -> " + verdict.what + ": retrying in " +
                                 core::human_duration(verdict.delay) + why + " (attempt " + std::to_string(attempt_) +
                                 "/" + max + ")");
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
  e.method = method_;
  e.host = host_;
  e.path = path_;
  e.attempt = attempt_;
  e.status = response_.status != 0 ? response_.status : static_cast<int>(response_code);
  e.outcome = verdict.what;
  e.retry = verdict.action == core::Action::retry;
  e.success = !e.retry && code == CURLE_OK && e.status >= 200 && e.status < 400;
  e.reason = verdict.reason;
  e.delay_ms = verdict.delay.count();
  e.bytes = static_cast<long long>(bytes);
  e.rule = rule_name_;
  e.fallback = fallback_.label();
  events::record(e);
}

void Transfer::log_final(const core::Verdict& verdict, int) const {
  // A first attempt that ends the transfer is what the host would have seen anyway: debug (-v)
  // only, unless curlretry itself chose not to retry something it otherwise would have. Any
  // other give-up is a failure the host now sees: warn, so CURLRETRY_LOG=warn means "quiet
  // unless it failed".
  const bool success = verdict.reason == "success" || verdict.reason == "committed";
  const bool quiet = attempt_ == 1 && verdict.reason != "retry-after-too-long" &&
                     verdict.reason != "not-replayable" && verdict.reason != "deadline" &&
                     verdict.reason != "max-elapsed" && verdict.reason != "budget" && verdict.reason != "cooldown";
  const LogLevel level = quiet ? LogLevel::debug : success ? LogLevel::info : LogLevel::warn;
  if (!log::enabled(level)) return;
  std::string line = method_ + " " + display_ + " -> " + verdict.what;
  if (success) {
    line += " after " + attempts_label();
  } else {
    // The server's value, the cap and the key that sets it: what to change if the wait is fine.
    if (verdict.reason == "retry-after-too-long") {
      line += " (server asked for " + core::human_duration(verdict.server_wait) + " > retry_after.max_ms " +
              core::human_duration(policy_->max_retry_after) + ")";
    }
    line += ": giving up after " + attempts_label() + " (" + verdict.reason + ")";
  }
  log::write(level, line);
}

}  // namespace curlretry::shim
