#include "shim/upload_replay.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "shim/mime_parts.h"
#include "shim/reentry_guard.h"

namespace curlretry::shim {
namespace {

// libcurl's rewind order when it has no seek callback: the ioctl callback, with the handle.
int ask_ioctl(const HostOptions& host, CURL* easy) {
  HostScope scope;
  return host.ioctl_fn(easy, CURLIOCMD_RESTARTREAD, host.ioctl_data) == CURLIOE_OK ? CURL_SEEKFUNC_OK
                                                                                   : CURL_SEEKFUNC_FAIL;
}

}  // namespace

void UploadReplay::release_now() {
  if (!copy_.empty()) std::string().swap(copy_);
  if (mime_ != nullptr) mime_parts::release(mime_);
  mime_ = nullptr;
}

void UploadReplay::start_mime(const curl_mime* body, size_t limit) {
  if (mime_ != nullptr && mime_ != body) mime_parts::release(mime_);
  mime_ = body;
  if (body != nullptr) mime_parts::start(body, limit);
}

void UploadReplay::restart_copy(bool meaningful) {
  std::string().swap(copy_);
  pos_ = 0;
  source_eof_ = false;  // rewound: the program has data to give again
  overflow_ = !meaningful;
}

size_t UploadReplay::read(const HostOptions& host, char* buffer, size_t size, size_t nitems, size_t limit) {
  size_t want = size * nitems;
  if (pos_ < copy_.size()) {
    size_t n = std::min(want, copy_.size() - pos_);
    std::memcpy(buffer, copy_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  // The program said "end of upload" in this transfer; libcurl would not ask it again.
  if (source_eof_) return 0;
  if (!read_called_) {
    read_called_ = true;
    if (!host.read_fn) {
      HostScope scope;
      fread_start_ = ftello(static_cast<FILE*>(host.read_data));
    }
  }
  size_t r;
  {
    HostScope scope;
    r = host.read_fn ? host.read_fn(buffer, size, nitems, host.read_data)
                     : std::fread(buffer, size, nitems, static_cast<FILE*>(host.read_data));
  }
  if (r == CURL_READFUNC_ABORT || r == CURL_READFUNC_PAUSE || r > want) return r;
  if (r == 0) source_eof_ = true;
  if (!overflow_) {
    if (copy_.size() + r <= limit) {
      copy_.append(buffer, r);
    } else {
      overflow_ = true;
      std::string().swap(copy_);
    }
  }
  pos_ = copy_.size();
  return r;
}

int UploadReplay::seek(const HostOptions& host, CURL* easy, curl_off_t offset, int origin) {
  bool to_start = offset == 0 && origin == SEEK_SET;
  int r = CURL_SEEKFUNC_CANTSEEK;
  if (host.seek_fn) {
    HostScope scope;
    r = host.seek_fn(host.seek_data, offset, origin);
  } else if (host.ioctl_fn) {
    // libcurl asks the ioctl callback only to rewind; a resume offset it reads past instead.
    if (to_start) {
      HostScope scope;
      const int answer = host.ioctl_fn(easy, CURLIOCMD_RESTARTREAD, host.ioctl_data);
      r = answer == CURLIOE_OK ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
      ioctl_refusal_ = answer;
    }
  } else if (!host.read_fn) {
    HostScope scope;
    r = fseeko(static_cast<FILE*>(host.read_data), static_cast<off_t>(offset), origin) == 0 ? CURL_SEEKFUNC_OK
                                                                                            : CURL_SEEKFUNC_CANTSEEK;
  }
  // Only a rewind to the start keeps the copy meaningful.
  if (r == CURL_SEEKFUNC_OK) restart_copy(to_start);
  return r;
}

void UploadReplay::report_ioctl_refusal(char* error_buffer) const {
  if (ioctl_refusal_ != CURLIOE_OK && error_buffer != nullptr)
    std::snprintf(error_buffer, CURL_ERROR_SIZE, "ioctl callback returned error %d", ioctl_refusal_);
}

bool UploadReplay::replayable(const HostOptions& host) const {
  if (mime_ != nullptr && !mime_parts::replayable(mime_)) return false;
  return !read_called_ || !overflow_ || host.seek_fn != nullptr || host.ioctl_fn != nullptr ||
         (!host.read_fn && fread_start_ >= 0);
}

bool UploadReplay::rewind(const HostOptions& host, CURL* easy) {
  return rewind_read(host, easy) && (mime_ == nullptr || mime_parts::rewind(mime_));
}

bool UploadReplay::rewind_read(const HostOptions& host, CURL* easy) {
  if (!read_called_) return true;
  if (!overflow_) {
    // Everything the program gave is here: re-send it, and ask the program nothing.
    pos_ = 0;
    return true;
  }
  bool ok = false;
  if (host.seek_fn) {
    HostScope scope;
    ok = host.seek_fn(host.seek_data, 0, SEEK_SET) == CURL_SEEKFUNC_OK;
  } else if (host.ioctl_fn) {
    ok = ask_ioctl(host, easy) == CURL_SEEKFUNC_OK;
  } else if (!host.read_fn && fread_start_ >= 0) {
    HostScope scope;
    ok = fseeko(static_cast<FILE*>(host.read_data), static_cast<off_t>(fread_start_), SEEK_SET) == 0;
  }
  if (ok) restart_copy(true);
  return ok;
}

}  // namespace curlretry::shim
