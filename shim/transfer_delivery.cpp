// Delivery to the host, the way libcurl would do it without us: held headers and body flushed,
// the program's refusal kept as its answer, and a give-up's replay (paused, resumed, its progress).
#include <algorithm>

#include "shim/log.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {
namespace {

using config::LogLevel;

}  // namespace

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

}  // namespace curlretry::shim
