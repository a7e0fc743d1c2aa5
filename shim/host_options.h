// What the host set on an easy handle, for the options the shim replaces while a transfer runs
// (its callbacks) or adjusts per attempt (timeout, fresh connect). libcurl has no getopt, so the
// setopt wrapper records them here.
#pragma once

#include <curl/curl.h>

#include <cstdio>
#include <string>

namespace curlretry::shim {

struct HostOptions {
  curl_write_callback write_fn = nullptr;  // nullptr: libcurl's default, fwrite
  void* write_data = stdout;
  curl_write_callback header_fn = nullptr;
  void* header_data = nullptr;
  curl_read_callback read_fn = nullptr;  // nullptr: libcurl's default, fread
  void* read_data = stdin;
  curl_seek_callback seek_fn = nullptr;
  void* seek_data = nullptr;
  curl_xferinfo_callback xferinfo_fn = nullptr;
  curl_progress_callback progress_fn = nullptr;
  void* progress_data = nullptr;
  bool noprogress = true;
  bool include_header = false;
  bool fresh_connect = false;
  long timeout_ms = 0;
  char* error_buffer = nullptr;
  std::string url;
  // The host's request headers: the fleet keys a 429's cooldown by its credential header.
  const curl_slist* http_headers = nullptr;

  // Which options the shim replaces with its trampolines during a transfer.
  static bool is_trampolined(CURLoption option);
};

// The value of one curl_easy_setopt call, decoded by option type range.
union OptionValue {
  long number;
  void* pointer;
  void (*function)();
  curl_off_t offset;
};

// Whether the shim records `option` (cheap; decides whether the handle's state is looked up).
bool is_recorded_option(CURLoption option);
// Records `value` when `option` is one the shim tracks. Returns true when it is tracked.
bool record_option(HostOptions& options, CURLoption option, OptionValue value);

}  // namespace curlretry::shim
