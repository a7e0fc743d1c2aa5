// What one attempt of a transfer knows and holds: the response's head, the header lines and the
// body held back from the program, how much of them reached it, and what was learnt on the way.
// A new attempt starts from a fresh value (restart()), so nothing carries over.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/decide.h"
#include "shim/response_head.h"
#include "shim/stream_hold.h"
#include "shim/write_refusal.h"

namespace curlretry::shim {

struct Attempt {
  ResponseHead response;
  std::string held_headers;            // header lines held for the program, in order
  std::vector<size_t> held_line_ends;  // where each held line ends in held_headers
  size_t flushed_lines = 0;            // held lines the program has
  std::string held_body;               // a failure candidate's body, or a stream's setup events
  size_t flushed_body = 0;             // bytes of held_body the program has
  bool status_learned = false;         // learn_status() ran (no header callback of ours)
  bool hints_learned = false;          // learn_hints() ran
  bool host_refused = false;           // a program callback refused data: its own abort
  // The program refused a held header line or body chunk (shim/write_refusal.h): nothing more
  // of this response reaches it, and the transfer ends with libcurl's own code and text for it.
  WriteRefusal held_refusal;
  bool socket_refused = false;  // the program's open-socket (or SSL_CTX) callback refused the connection
  bool upload_paused = false;          // the program's read callback paused the upload
  // Decided before the attempt ended: the held body overflowed, or a stream sent an error event.
  std::optional<core::Verdict> early_verdict;
  StreamHold stream_hold;
  CURLcode replay_code = CURLE_OK;  // the transfer's result once the held response is replayed

  // Every member back to its initial value, in place: the strings and the vector emptied with
  // their storage kept (bounded by Transfer::end()), the optionals reset, no temporary built,
  // moved from and destroyed (the success path's cost, issue 27). A new member is reset here
  // too: the size check below fails until it is.
  [[gnu::always_inline]] void restart() noexcept {
    response.clear();
    held_headers.clear();
    held_line_ends.clear();
    flushed_lines = 0;
    held_body.clear();
    flushed_body = 0;
    status_learned = hints_learned = host_refused = false;
    held_refusal = WriteRefusal{};
    socket_refused = upload_paused = false;
    early_verdict.reset();
    stream_hold.reset();
    replay_code = CURLE_OK;
  }
};
#if defined(__x86_64__) && defined(__GLIBCXX__) && !defined(_GLIBCXX_DEBUG)
static_assert(sizeof(Attempt) == 808, "a new member of Attempt: reset it in Attempt::restart(), then update the size");
#endif

}  // namespace curlretry::shim
