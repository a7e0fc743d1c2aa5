// The per-handle state machine shared by the easy and multi paths: it owns the host's recorded
// options, installs the shim's callbacks for the length of one transfer, holds headers until the
// commit point, holds a failure candidate's body, tees read-callback uploads, and turns the end
// of each attempt into "retry after D" or "done with this CURLcode" by asking core::decide.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/decide.h"
#include "core/random.h"
#include "shim/fleet_hook.h"
#include "shim/host_options.h"
#include "shim/real_curl.h"
#include "shim/url_parts.h"

namespace curlretry::shim {

struct Runtime;

using Clock = std::chrono::steady_clock;

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
  bool running() const { return running_; }
  // curl_easy_reset dropped every option, ours included.
  void forget_install();
  // The multi handle that last took this handle from the host (kept after a remove, so that
  // cleaning up the handle takes it out of that multi's accounts).
  CURLM* multi() const { return multi_; }
  void set_multi(CURLM* multi) { multi_ = multi; }

  // Starts a transfer: false means "not ours" (disabled, non-HTTP), and the caller passes the
  // transfer through untouched. On true, the shim's callbacks are installed.
  bool begin(const Runtime& runtime);
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
  bool replay_paused() const { return replay_paused_; }
  void request_unpause() { unpause_requested_.store(true, std::memory_order_release); }
  bool unpause_requested() const { return unpause_requested_.load(std::memory_order_acquire); }
  // The transfer's final code once the replay is complete; `paused` stays set while it is not.
  Step resume_replay();
  // Arms the handle for the next attempt (fresh connection, remaining deadline).
  void prepare_next_attempt();
  // The first attempt is held back (fleet.hold_new): the next prepare_next_attempt() arms it.
  void hold_first_attempt() { attempt_ = 0; }
  // A retry's wait is over: how much longer the fleet's cooldown for this request now asks for
  // (other processes may have raised it meanwhile). Zero when none, or when it would outrun the
  // transfer's limits or retry_after.max_ms in all.
  core::Millis fleet_wait_more();

  // Calls the host's progress callback, as libcurl would during a transfer. False: the host
  // asked to abort.
  bool host_progress_continue();
  // The host's deadline for the whole transfer, if it set CURLOPT_TIMEOUT(_MS).
  std::optional<Clock::time_point> deadline() const { return deadline_; }
  // Reports an abort by the host during backoff; returns the code to hand the host.
  CURLcode aborted_during_backoff();

  // Callbacks installed on the handle; `userdata` is the Transfer.
  static size_t on_write(char* data, size_t size, size_t nmemb, void* userdata);
  static size_t on_header(char* data, size_t size, size_t nmemb, void* userdata);
  static size_t on_read(char* buffer, size_t size, size_t nitems, void* userdata);
  static int on_seek(void* userdata, curl_off_t offset, int origin);

 private:
  struct Response {
    int status = 0;
    std::optional<std::string> retry_after;
    std::optional<std::string> retry_after_ms;
    std::optional<std::string> should_retry;
    bool candidate = false;  // a failure candidate: its body is held, not streamed
  };

  size_t write(char* data, size_t n);
  size_t header(char* data, size_t n);
  size_t read(char* buffer, size_t size, size_t nitems);
  int seek(curl_off_t offset, int origin);

  void install();
  void uninstall();
  // Our header callback is installed only when headers must be held for the host (or libcurl
  // predates curl_easy_header): a success path nobody reads headers on pays for no callback.
  void sync_header_callback();
  void reset_attempt();
  void note_header_line(const char* data, size_t n);
  // Without our header callback: the status from CURLINFO_RESPONSE_CODE, and the decision's
  // hints, when the status needs them, from curl_easy_header.
  void learn_status();
  void learn_hints();
  std::optional<std::string> libcurl_header(const char* name) const;

  // Delivery to the host, emulating libcurl's defaults. Return what the host returned.
  size_t host_write(const char* data, size_t n);
  bool host_wants_headers() const { return host.include_header || host.header_fn || host.header_data; }
  size_t deliver_header_line(const char* data, size_t n);
  // Hands held headers then held body to the host, resuming where a pause left off.
  enum class Flush { done, paused, refused };
  Flush flush_held();

  bool rewind_upload();
  bool upload_replayable() const;

  void resolve_request();
  core::Outcome outcome(CURLcode code) const;
  core::Verdict decide_now(CURLcode code);
  // The fleet's word on a verdict: shared cooldown and retry budget (shim/fleet_hook.h).
  void settle_with_fleet(core::Verdict& verdict) const;
  void log_retry(const core::Verdict& verdict) const;
  void log_final(const core::Verdict& verdict, int status) const;
  void record_event(const core::Verdict& verdict, CURLcode code) const;
  std::string attempts_label() const;

  CURL* easy_;
  const real::Api* api_;
  const Runtime* runtime_ = nullptr;
  const core::Policy* policy_ = nullptr;
  std::string rule_name_;
  std::string method_;
  std::string display_;
  std::string host_;  // for the attempt log
  std::string path_;
  bool installed_ = false;
  bool header_cb_ = false;  // our on_header is on the handle
  bool running_ = false;
  CURLM* multi_ = nullptr;

  // Per transfer.
  int attempt_ = 0;
  Clock::time_point started_;
  std::optional<Clock::time_point> deadline_;
  core::Millis previous_delay_{0};
  core::SplitMix random_{0};
  bool fresh_connect_forced_ = false;
  bool timeout_changed_ = false;
  bool last_transport_error_ = false;
  fleet_hook::KeyCache fleet_key_;  // kept across transfers of the handle
  core::Millis fleet_extended_{0};  // waited beyond the decided delay for fleet cooldowns

  // Per attempt.
  Response response_;
  std::string held_headers_;
  std::vector<size_t> held_line_ends_;
  size_t flushed_lines_ = 0;
  std::string held_body_;
  size_t flushed_body_ = 0;
  bool committed_ = false;
  bool status_learned_ = false;  // learn_status() ran for this attempt
  bool hints_learned_ = false;   // learn_hints() ran for this attempt
  bool host_refused_ = false;       // a host callback refused data: its own abort
  std::optional<core::Verdict> early_verdict_;  // decided when the held body overflowed
  bool replay_paused_ = false;
  std::atomic<bool> unpause_requested_{false};  // set from any thread by curl_easy_pause
  CURLcode replay_code_ = CURLE_OK;

  // Upload replay.
  bool read_called_ = false;
  std::string tee_;
  bool tee_overflow_ = false;
  size_t read_pos_ = 0;
  long long fread_start_ = -1;  // ftello of the default fread stream at its first read
};

}  // namespace curlretry::shim
