// The per-handle state machine shared by the easy and multi paths: it owns the host's recorded
// options, installs the shim's callbacks for the length of one transfer, holds headers until the
// commit point, holds a failure candidate's body, tees read-callback uploads, and turns the end
// of each attempt into "retry after D" or "done with this CURLcode" by asking core::decide.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "config/config.h"
#include "core/decide.h"
#include "core/settle.h"
#include "shim/clock.h"
#include "shim/credential_command.h"
#include "shim/fleet_hook.h"
#include "shim/host_options.h"
#include "shim/log.h"
#include "shim/once_per_transfer.h"
#include "shim/real_curl.h"
#include "shim/request_override.h"
#include "shim/transfer_attempt.h"
#include "shim/transfer_phase.h"
#include "shim/transfer_run.h"
#include "shim/url_parts.h"

namespace curlretry::shim {

// libcurl never hands a write callback more than this; replays use the same chunking.
inline constexpr size_t kChunk = CURL_MAX_WRITE_SIZE;

struct Runtime;

// Puts the host's own callback options on `easy` (after a transfer, or on a duplicate).
void apply_host_callbacks(const real::Api& api, CURL* easy, const HostOptions& host);

class Transfer {
 public:
  // `api`: the libcurl that made the handle; all of our own calls on it go there.
  Transfer(CURL* easy, const real::Api* api);
  const real::Api& api() const { return *api_; }

  HostOptions host;

  // True while the shim's callbacks are installed on the handle (from its first transfer on).
  bool installed() const { return installed_; }
  // True from begin() to end(): a transfer is under way.
  bool running() const { return phase() != Phase::idle; }
  Phase phase() const { return phase_.load(std::memory_order_relaxed); }
  // curl_easy_reset dropped every option, ours included.
  void forget_install();
  // The multi handle that last took this handle from the host (kept after a remove, so that
  // cleaning up the handle takes it out of that multi's accounts).
  CURLM* multi() const { return multi_; }
  void set_multi(CURLM* multi) { multi_ = multi; }

  // Starts a transfer: false means "not ours" (disabled, non-HTTP), and the caller passes the
  // transfer through untouched. On true, the shim's callbacks are installed. `own_thread`: the
  // host's thread waits for it in curl_easy_perform (false: it runs in the host's multi loop).
  bool begin(const Runtime& runtime, bool own_thread);
  // Puts the host's own callbacks and options back. Idempotent.
  void end();
  // Hands a transfer that has begun, but not started in libcurl, back to the host's own
  // callbacks: libcurl then runs it as if the shim were not there.
  void abandon();

  // What to do after an attempt ended with `code`.
  struct Step {
    bool retry = false;
    core::Millis delay{0};
    CURLcode code = CURLE_OK;  // the transfer's result when !retry
    // The host paused (CURL_WRITEFUNC_PAUSE) while the held response was being handed to it:
    // the transfer ends with `code` once resume_replay() says so.
    bool paused = false;
  };
  Step finish_attempt(CURLcode code);

  // Replaying a held response to a host that paused it: curl_easy_pause(CONT) from the host
  // lets resume_replay() carry on where the pause left off.
  bool replay_paused() const { return phase() == Phase::replay_paused; }
  void request_unpause() { unpause_requested_.store(true, std::memory_order_release); }
  bool unpause_requested() const { return unpause_requested_.load(std::memory_order_acquire); }
  // The transfer's final code once the replay is complete; `paused` stays set while it is not.
  Step resume_replay();
  // The host's curl_easy_pause(CONT) on the thread that runs the transfer: as libcurl does, the
  // pending data reaches the write callback inside that call (curl_easy_pause(3)). Returns what
  // libcurl's curl_easy_pause would: CURLE_WRITE_ERROR when the program refused it.
  bool replay_paused_here() const {
    return replay_paused() && replay_thread_.load(std::memory_order_acquire) == std::this_thread::get_id();
  }
  CURLcode unpause_replay();
  // The transfer's result once its replay is over (a refusal included).
  CURLcode replay_code() const { return attempt_.replay_code; }
  // While the host holds the replay paused, libcurl keeps calling its progress callback: with
  // the counts libcurl had when the paused chunk was read. False: the host aborted, and the
  // transfer ended with replay_aborted().
  bool replay_progress_continue();
  CURLcode replay_aborted();
  // Arms the handle for the next attempt (fresh connection, remaining deadline).
  void prepare_next_attempt();
  // The first attempt is held back (fleet.hold_new): the next prepare_next_attempt() arms it.
  void hold_first_attempt();
  // A retry's wait is over: the fleet's word on sending it now (shim/fleet_pacing.cpp): go (its
  // budget token is taken), wait `wait` more (a cooldown raised meanwhile, no token yet) and ask
  // again, or give up (give_up_for_budget()). Waits it asks for count towards its limits.
  core::fleet_verdict::Gate fleet_gate();
  // The recovery wake (shim/fleet_pacing.cpp, core/fleet_wake.h). The retry's backoff begins:
  // true when another request's success may end it early (its key was in an outage).
  bool arm_wake();
  bool wakeable() const { return fleet_key_.parked_stamp != 0 && run_.attempt >= 1; }
  // We stopped the attempt when its retry was decided (attempt_.early_verdict): its answer can no
  // longer reach the program whole, so the fleet does not give that retry up
  // (core::fleet_verdict::Limits::answer_cut).
  bool answer_cut() const { return attempt_.early_verdict && attempt_.early_verdict->action == core::Action::retry; }
  // While it waits, `left` of its backoff to go: true when a success to its key was sent after
  // its failed attempt. Its wait then ends; its retry takes a budget token (KeyCache::paced).
  bool wake_due(core::Millis left);
  // No token came within the request's limits: the held response of the last attempt is the
  // answer, reason "budget".
  Step give_up_for_budget(CURLcode code);

  // A credential command runs in the background while the transfer waits (finish_attempt() then
  // asks for an immediate retry); the step between attempts (shim/between_attempts.h) asks how it
  // is going before the next attempt, and on `failed` ends with the refused attempt's response.
  // Easy and multi alike; off only for a multi handle that cannot park a transfer (no
  // curl_multi_remove_handle), where the command runs inside finish_attempt().
  void set_async_credential(bool async) { async_credential_ = async; }
  enum class CredentialProgress : unsigned char { none, running, ready, failed };
  CredentialProgress poll_credential();
  Step give_up_after_refresh(CURLcode code);
  // The program's deadline (CURLOPT_TIMEOUT) came while the command ran: it is killed, and the
  // transfer gives up with the refused attempt's response (`code` its result), as on `failed`.
  Step refresh_outlasted_deadline(CURLcode code);

  // A duplicate of this handle made mid-transfer gets the program's own request options back.
  void put_back_request(CURL* twin) const { override_.put_back(*api_, twin, host); }

  // Calls the host's progress callback, as libcurl would during a transfer. False: the host
  // asked to abort.
  bool host_progress_continue();
  bool host_progress_continue(curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
  // The handle's fleet key, as count_request() left it at begin() (fleet_hook::hold_new).
  const fleet_hook::KeyCache& fleet_key() const { return fleet_key_; }
  // The host's deadline for the whole transfer, if it set CURLOPT_TIMEOUT(_MS).
  std::optional<Clock::time_point> deadline() const { return run_.deadline; }
  // The "still waiting" lines of the wait that finish_attempt() asked for (shim/heartbeat.cpp):
  // when the next one is due, and saying it if it is due at `now`.
  std::optional<Clock::time_point> next_heartbeat() const { return run_.heartbeat.next(); }
  void heartbeat(Clock::time_point now);
  // Reports an abort by the host during backoff; returns the code to hand the host.
  CURLcode aborted_during_backoff();

  // Callbacks installed on the handle; `userdata` is the Transfer.
  static size_t on_write(char* data, size_t size, size_t nmemb, void* userdata);
  static size_t on_header(char* data, size_t size, size_t nmemb, void* userdata);
  static size_t on_read(char* buffer, size_t size, size_t nitems, void* userdata);
  static int on_seek(void* userdata, curl_off_t offset, int origin);
  static curl_socket_t on_opensocket(void* userdata, curlsocktype purpose, struct curl_sockaddr* address);
  static CURLcode on_ssl_ctx(CURL* easy, void* ssl_ctx, void* userdata);
  // The program changed a watched option (HostOptions::is_watched) on an installed handle: the
  // pair goes on again, and libcurl's answer for `option` is the program's.
  CURLcode rewatch(CURLoption option);

 private:
  // The one place the phase changes (logged at debug). Inline, with the debug line out of line:
  // a success passes here four times.
  void enter(Phase next) {
    if (next == phase()) return;
    if (log::enabled(config::LogLevel::debug)) log_phase(next);
    phase_.store(next, std::memory_order_relaxed);
  }
  void log_phase(Phase next) const;
  bool committed() const {
    const Phase now = phase();
    return now == Phase::committed || now == Phase::committed_at_headers;
  }

  size_t write(char* data, size_t n);
  // A 2xx event stream's setup events are held until its first content event (stream_hold.cpp).
  // True when this chunk was dealt with (held, or the attempt stopped on an error event) and
  // `result` is the answer to libcurl; false: deliver as a committed stream.
  // Inline: a response whose stream was checked and passes (every chunk of a success after its
  // first) pays a test, and the first chunk one small call (start_stream_hold), not the feed's
  // whole frame (issue 27).
  bool hold_stream(const char* data, size_t n, size_t& result) {
    if (!attempt_.stream_hold.holding() && (attempt_.stream_hold.checked() || !start_stream_hold())) return false;
    return feed_stream(data, n, result);
  }
  // The response's first chunk: whether its stream is held (started) or passes (stream_hold.cpp).
  bool start_stream_hold();
  bool feed_stream(const char* data, size_t n, size_t& result);
  // Inline in start_stream_hold (stream_hold.cpp): one call for a 2xx's first chunk, not three.
  [[gnu::always_inline]] inline bool stream_wanted();
  size_t header(char* data, size_t n);
  size_t read(char* buffer, size_t size, size_t nitems);
  int seek(curl_off_t offset, int origin);

  void install();
  void uninstall();
  // Our header callback is installed only when headers must be held for the host (or libcurl
  // predates curl_easy_header): a success path nobody reads headers on pays for no callback.
  void sync_header_callback();
  bool wants_header_callback() const { return host_wants_headers() || api_->easy_header == nullptr; }
  // Something held is still to reach the program, or it refused (flush_held() has work to do).
  bool holds_anything() const {
    return attempt_.held_refusal.refused() || attempt_.flushed_lines < attempt_.held_line_ends.size() ||
           attempt_.flushed_body < attempt_.held_body.size();
  }
  // Our read callback is on the handle unless a form streams through the program's own. The
  // common handle (ours on, no form) pays a test, not a call (issue 27).
  void sync_read_callback() {
    if (!read_cb_ || host.form_is_body) set_read_callback();
  }
  void set_read_callback();
  // Our open-socket callback watches the program's, when it has one (shim/transfer_sockets.cpp).
  // Nothing to do for the common handle: no callback of the program's, and none of ours on it.
  void sync_socket_callback() {
    if (host.opensocket_fn || socket_cb_ || host.opensocket_data) rewatch(CURLOPT_OPENSOCKETFUNCTION);
    if (host.ssl_ctx_fn || ssl_ctx_cb_ || host.ssl_ctx_data) rewatch(CURLOPT_SSL_CTX_FUNCTION);
  }
  // The next attempt starts from a fresh Attempt. The held body's buffer (at most kChunk, see
  // end()) is kept: a handle that holds a stream's setup events on every request allocates it once.
  void reset_attempt() {
    attempt_.restart();
    unpause_requested_.store(false, std::memory_order_relaxed);
  }
  // Reads a header line into the attempt's ResponseHead; at the blank line, classifies it.
  void note_header_line(const char* data, size_t n);
  // At the end of a response's headers: nothing more can arrive in this attempt that we could
  // retry (a final response without a body, a redirect to another protocol). Held headers then
  // reach the host now, as they would without us, before libcurl goes on (closes the socket,
  // starts the FTP transfer).
  bool ends_our_part() const;
  // Without our header callback: the status from CURLINFO_RESPONSE_CODE, and the decision's
  // hints, when the status needs them, from curl_easy_header.
  void learn_status();
  // A response that may be retryable: whether it is a failure candidate, by the matched rule.
  void classify_response();
  void learn_hints();

  // Delivery to the host, emulating libcurl's defaults. Return what the host returned.
  size_t host_write(const char* data, size_t n);
  bool host_wants_headers() const { return host.include_header || host.header_fn || host.header_data; }
  size_t deliver_header_line(const char* data, size_t n, WriteRefusal::By* by = nullptr);
  // Hands held headers then held body to the host, resuming where a pause left off.
  enum class Flush { done, paused, refused };
  Flush flush_held();
  // The host refused a held line or chunk: recorded, and the transfer then ends as libcurl ends
  // it when its callback refuses (code and error text), the rest never handed over.
  Flush refused_held(WriteRefusal::By by, size_t passed, size_t returned);
  Step end_refused();

  bool rewind_upload();
  bool upload_replayable() const;

  // The rule a request matches (nullptr: the defaults), by method, URL and, when the config has
  // header rules, the program's request headers: the one matching for the attempt's policy
  // (resolve_request, with libcurl's effective method and URL) and for a cached credential
  // before the first attempt (the program's own method and URL).
  const config::Rule* match_rule(std::string_view method, const UrlParts& parts) const;
  void resolve_request();
  core::Outcome outcome(CURLcode code) const;
  core::Verdict decide_now(CURLcode code);
  // decide's verdict finished by the facts of this transfer, in core/settle.h's order: the
  // headers already delivered, the fleet, the credential refresh, the upload's rewind.
  void settle_verdict(core::Verdict& verdict);
  // The fleet's word on a verdict: shared cooldown and retry budget (shim/fleet_hook.h).
  void settle_with_fleet(core::Verdict& verdict);
  void log_retry(const core::Verdict& verdict) const;
  void arm_heartbeat(const core::Verdict& verdict);
  // After an attempt that will be retried: counts overloads, switches to the rule's fallback
  // (shim/fallback.cpp).
  void note_overload();
  // The rule's `auth:` (shim/credential_refresh.cpp): whether a response with `status` is held
  // for a refresh; running the command for a give-up (`what`: the verdict's words, for the log;
  // core::settle::credential turns its result into the verdict); and sending the process's last
  // refreshed value from a transfer's first attempt on.
  bool wants_refresh(int status) const;
  core::settle::Credential refresh_credential(const std::string& what);
  void apply_cached_credential();
  void credential_failed(const std::string& why);
  void credential_ready(std::string value);
  void log_final(const core::Verdict& verdict, int status) const;
  void record_event(const core::Verdict& verdict, CURLcode code) const;
  std::string attempts_label() const;

  // Per handle.
  CURL* easy_;
  const real::Api* api_;
  const Runtime* runtime_ = nullptr;
  bool installed_ = false;
  bool header_cb_ = false;   // our on_header is on the handle
  bool read_cb_ = false;     // our on_read is on the handle
  bool socket_cb_ = false;   // our on_opensocket is on the handle
  bool ssl_ctx_cb_ = false;  // our on_ssl_ctx is on the handle
  CURLM* multi_ = nullptr;
  fleet_hook::KeyCache fleet_key_;  // kept across transfers of the handle
  RequestOverride override_;        // applied from the next attempt on, undone by end()
  OncePerTransfer once_per_transfer_;

  // Where the transfer is (docs/DESIGN.md §6); changed only by enter(). Atomic for
  // replay_paused(), which curl_easy_pause may ask from another thread.
  std::atomic<Phase> phase_{Phase::idle};
  // Per transfer.
  TransferRun run_;
  // Options of the handle changed for a retry, put back by end() (and reset by it).
  bool fresh_connect_forced_ = false;
  bool timeout_changed_ = false;
  // The credential command runs in the background (shim/between_attempts.h), killed by end().
  bool async_credential_ = true;
  std::unique_ptr<credential::Command> pending_credential_;
  // Per attempt.
  Attempt attempt_;
  std::atomic<bool> unpause_requested_{false};  // set from any thread by curl_easy_pause
  // The thread that paused the replay: only there may curl_easy_pause hand the data over.
  std::atomic<std::thread::id> replay_thread_{};
};

}  // namespace curlretry::shim
