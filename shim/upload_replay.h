// A read-callback upload, seen through the shim's read and seek trampolines: what the program's
// read callback (or libcurl's default fread) gave within one transfer, kept up to a bound so
// that a retry can re-send it without the program noticing.
//
// The rules, each what libcurl itself does within one transfer:
// - the program's read callback is never called again after it returned 0 (end of upload);
// - a retry re-sends from the kept copy when it holds everything read so far, and then never
//   asks the program to seek (a program whose seek refuses, like git's, never learns of it);
// - only when the copy overflowed is the program asked to rewind, the way libcurl rewinds
//   (seek callback, else ioctl callback, else fseek of the default FILE*);
// - libcurl's own rewinds (redirect, auth) reach the program as they would without the shim.
// A CURLOPT_MIMEPOST body's curl_mime_data_cb parts follow the same rules (shim/mime_parts.h):
// the transfer names its MIME body here, and replayable/rewind/release cover its parts too.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <string>

#include "shim/host_options.h"

namespace curlretry::shim {

class UploadReplay {
 public:
  // A new transfer: nothing read yet, nothing copied, no MIME body (start_mime() sets it).
  // Inline: every transfer pays it, upload or not (issue 27).
  void start() noexcept {
    read_called_ = false;
    source_eof_ = false;
    copy_.clear();
    overflow_ = false;
    pos_ = 0;
    fread_start_ = -1;
    ioctl_refusal_ = 0;
    mime_ = nullptr;
  }
  // Frees the copy's memory between transfers (the MIME body's copies too). Inline: a transfer
  // without an upload pays two tests (issue 27).
  void release() {
    if (!copy_.empty() || mime_ != nullptr) release_now();
  }
  // The transfer's MIME body (nullptr: none); `limit`: max_upload_replay for its callback parts.
  void start_mime(const curl_mime* body, size_t limit);

  // CURLOPT_READFUNCTION on the program's behalf; `limit`: max_upload_replay.
  size_t read(const HostOptions& host, char* buffer, size_t size, size_t nitems, size_t limit);
  // CURLOPT_SEEKFUNCTION on the program's behalf, for libcurl's own rewinds and resumes.
  int seek(const HostOptions& host, CURL* easy, curl_off_t offset, int origin);

  // libcurl's own rewind ended the transfer (65) because the program's ioctl callback refused it:
  // libcurl writes "seek callback returned error" (it asked our seek callback); this writes the
  // text it writes when it asks the ioctl callback itself, into the program's error buffer.
  void report_ioctl_refusal(char* error_buffer) const;

  // Whether a retry could re-send the upload (asks nobody).
  bool replayable(const HostOptions& host) const;
  // Before a retry: the next attempt's reads start over. False: the upload cannot be re-sent.
  bool rewind(const HostOptions& host, CURL* easy);

 private:
  void release_now();
  void restart_copy(bool meaningful);
  bool rewind_read(const HostOptions& host, CURL* easy);

  bool read_called_ = false;
  bool source_eof_ = false;     // the program's callback returned 0: never call it again
  std::string copy_;
  bool overflow_ = false;       // the copy lost data (too large, or a seek away from the start)
  size_t pos_ = 0;              // the next read serves copy_[pos_] while pos_ < copy_.size()
  long long fread_start_ = -1;  // ftello of the default fread stream at its first read
  int ioctl_refusal_ = 0;       // what the program's ioctl callback returned to libcurl's rewind
  const curl_mime* mime_ = nullptr;  // the MIME body whose callback parts keep copies
};

}  // namespace curlretry::shim
