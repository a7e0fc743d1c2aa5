// The transfer's lifecycle: begin and end of a transfer, the callbacks installed on the handle
// and given back, one attempt's state renewed for the next. (The libcurl callbacks are in
// transfer_callbacks.cpp, the end of an attempt in transfer_verdict.cpp, delivery and replay to
// the host in transfer_delivery.cpp, log lines in transfer_log.cpp.)
#include "shim/transfer.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "shim/events.h"
#include "shim/fleet_hook.h"
#include "shim/log.h"
#include "shim/proxy_layer.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/runtime.h"
#include "shim/set_real.h"

namespace curlretry::shim {
namespace {

using config::LogLevel;

}  // namespace

Transfer::Transfer(CURL* easy, const real::Api* api) : easy_(easy), api_(api) {}

// ---------------------------------------------------------------------------------------------
// Lifecycle

bool Transfer::begin(const Runtime& runtime, bool own_thread) {
  if (!runtime.active || phase() != Phase::idle) return false;
  if (!url_is_http(host.url)) {
    // Not ours: libcurl must see the host's own callbacks for this one.
    if (installed_) uninstall();
    return false;
  }
  runtime_ = &runtime;
  run_.restart();
  run_.started = Clock::now();
  if (const curl_mime* body = host.mime_body()) run_.upload.start_mime(body, runtime.config.settings.max_upload_replay);
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
  fleet_key_.own_thread = own_thread;
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
  // What an attempt held is kept for the next transfer's (Attempt::restart()) up to a chunk, so
  // that a handle does not keep the memory of its largest response.
  if (attempt_.held_body.capacity() > kChunk) std::string().swap(attempt_.held_body);
  if (header_cb_) {  // only our header callback holds header lines
    if (attempt_.held_headers.capacity() > kChunk) std::string().swap(attempt_.held_headers);
    if (attempt_.held_line_ends.capacity() > kChunk / 64) std::vector<size_t>().swap(attempt_.held_line_ends);
  }
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

void Transfer::set_read_callback() {
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

}  // namespace curlretry::shim
