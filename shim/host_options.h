// What the host set on an easy handle, for the options the shim replaces while a transfer runs
// (its callbacks) or adjusts per attempt (timeout, fresh connect). libcurl has no getopt, so the
// setopt wrapper records them here.
#pragma once

#include <curl/curl.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

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
  // Not replaced: libcurl asks it to rewind only when there is no seek callback (ours is).
  curl_ioctl_callback ioctl_fn = nullptr;
  void* ioctl_data = nullptr;
  // Watched (shim/transfer_sockets.cpp): a CURL_SOCKET_BAD from it is the program's own refusal.
  curl_opensocket_callback opensocket_fn = nullptr;
  void* opensocket_data = nullptr;
  // Watched too: any code it returns is the program's own refusal of the TLS connection.
  curl_ssl_ctx_callback ssl_ctx_fn = nullptr;
  void* ssl_ctx_data = nullptr;
  // CURLOPT_HTTPPOST, and whether it is the request's body (a later POST, PUT, GET... is not).
  const curl_httppost* form = nullptr;
  bool form_is_body = false;
  // CURLOPT_MIMEPOST, and whether it is still the request's body (the same options end it).
  const curl_mime* mime = nullptr;
  bool mime_is_body = false;
  // The handle's own cookie engine is on (COOKIEFILE, COOKIEJAR or COOKIELIST was set), and
  // whether a share handle may hold its cookies instead.
  bool cookie_engine = false;
  bool shared = false;
  curl_xferinfo_callback xferinfo_fn = nullptr;
  curl_progress_callback progress_fn = nullptr;
  void* progress_data = nullptr;
  bool noprogress = true;
  bool include_header = false;
  bool fresh_connect = false;
  bool follow_location = false;
  // Called by libcurl once per transfer (at its start): the shim keeps it off for attempts 2+.
  curl_hstsread_callback hsts_read_fn = nullptr;
  long timeout_ms = 0;
  char* error_buffer = nullptr;
  std::string url;
  // The request as the program described it: fallback and credential refresh send a changed
  // copy and put these back after the transfer.
  curl_slist* http_header = nullptr;  // CURLOPT_HTTPHEADER: the program's list, never modified
  enum class Body : unsigned char { none, pointer, copy };
  Body post_kind = Body::none;
  const char* post_fields = nullptr;  // CURLOPT_POSTFIELDS: the program's buffer
  std::string post_copy;              // CURLOPT_COPYPOSTFIELDS: what libcurl copied
  curl_off_t post_size = -1;          // CURLOPT_POSTFIELDSIZE(_LARGE); -1 = strlen
  // The request sends those POSTFIELDS: the last say went to POSTFIELDS/COPYPOSTFIELDS/POST, not
  // to UPLOAD, HTTPGET, NOBODY, MIMEPOST or HTTPPOST (which keep the fields but send no such body).
  bool post_active = false;
  std::string custom_request;  // CURLOPT_CUSTOMREQUEST
  // The method the body options made, as libcurl keeps it (lib/setopt.c: set.method and
  // set.opt_no_body, each set by the last of POST, POSTFIELDS, HTTPPOST, MIMEPOST, UPLOAD/PUT,
  // HTTPGET, NOBODY): request_method() turns them into the request line's method.
  enum class Method : unsigned char { get, post, put, head };
  Method method = Method::get;
  bool no_body = false;

  // Which options the shim replaces with its trampolines during a transfer.
  static bool is_trampolined(CURLoption option);
  // Callbacks the shim calls through its own when the program set them (shim/transfer_sockets.cpp):
  // a change is re-applied as a pair, with libcurl's answer to it (an SSL_CTX callback on a
  // libcurl without one is CURLE_NOT_BUILT_IN, with the library too).
  static bool is_watched(CURLoption option);
  // A curl_formadd(CURLFORM_STREAM) part is the body: libcurl calls the read callback with that
  // part's own pointer, not CURLOPT_READDATA, so the program's read callback must be the one
  // on the handle.
  bool form_streams() const;
  // The MIME body the request sends, or nullptr.
  const curl_mime* mime_body() const { return mime_is_body ? mime : nullptr; }
};

// The value of one curl_easy_setopt call, decoded by option type range.
union OptionValue {
  long number;
  void* pointer;
  void (*function)();
  curl_off_t offset;
};

// What the shim does with a curl_easy_setopt option: nothing (passed on), recorded, recorded and
// replaced by a trampoline while installed, or recorded and watched (HostOptions::is_trampolined,
// is_watched). One classification per call: the setopt wrapper asks only this (issue 27).
enum class OptionKind : unsigned char { other, recorded, trampolined, watched };
// Inline: asked by every curl_easy_setopt of the program.
[[gnu::always_inline]] inline OptionKind option_kind(CURLoption option) {
  switch (option) {
    // Replaced by the shim's trampolines during a transfer.
    case CURLOPT_WRITEFUNCTION:
    case CURLOPT_WRITEDATA:
    case CURLOPT_HEADERFUNCTION:
    case CURLOPT_HEADERDATA:
    case CURLOPT_READFUNCTION:
    case CURLOPT_READDATA:
    case CURLOPT_SEEKFUNCTION:
    case CURLOPT_SEEKDATA:
    case CURLOPT_HEADER: return OptionKind::trampolined;
    // Called through the shim's own when the program set them.
    case CURLOPT_OPENSOCKETFUNCTION:
    case CURLOPT_OPENSOCKETDATA:
    case CURLOPT_SSL_CTX_FUNCTION:
    case CURLOPT_SSL_CTX_DATA: return OptionKind::watched;
    case CURLOPT_XFERINFOFUNCTION:
    case CURLOPT_PROGRESSFUNCTION:
    case CURLOPT_XFERINFODATA:
    case CURLOPT_NOPROGRESS:
    case CURLOPT_FRESH_CONNECT:
    case CURLOPT_FOLLOWLOCATION:
    case CURLOPT_HSTSREADFUNCTION:
    case CURLOPT_TIMEOUT:
    case CURLOPT_TIMEOUT_MS:
    case CURLOPT_ERRORBUFFER:
    case CURLOPT_URL:
    case CURLOPT_IOCTLFUNCTION:
    case CURLOPT_IOCTLDATA:
    // What the request's body is: libcurl's last word among these wins.
    case CURLOPT_HTTPPOST:
    case CURLOPT_MIMEPOST:
    case CURLOPT_POST:
    case CURLOPT_POSTFIELDS:
    case CURLOPT_COPYPOSTFIELDS:
    case CURLOPT_POSTFIELDSIZE:
    case CURLOPT_POSTFIELDSIZE_LARGE:
    case CURLOPT_HTTPGET:
    case CURLOPT_UPLOAD:
    case CURLOPT_PUT:
    case CURLOPT_NOBODY:
    case CURLOPT_CUSTOMREQUEST:
    case CURLOPT_HTTPHEADER:
    case CURLOPT_COOKIEFILE:
    case CURLOPT_COOKIEJAR:
    case CURLOPT_COOKIELIST:
    case CURLOPT_SHARE: return OptionKind::recorded;
    default: return OptionKind::other;
  }
}
// The method of the request the options describe, as libcurl 7.88 picks it (Curl_http_method in
// lib/http.c): CUSTOMREQUEST; else NOBODY's HEAD; else PUT for an upload, POST for fields, a form
// or MIME; else GET. The one derivation before the first attempt, when libcurl has no effective
// method yet (rule matching for a cached credential); after it libcurl's own is asked.
inline std::string_view request_method(const HostOptions& o) {
  if (!o.custom_request.empty()) return o.custom_request;
  if (o.no_body) return "HEAD";
  switch (o.method) {
    case HostOptions::Method::post: return "POST";
    case HostOptions::Method::put: return "PUT";
    case HostOptions::Method::head: return "HEAD";
    case HostOptions::Method::get: break;
  }
  return "GET";
}

// Whether the shim records `option` (cheap; decides whether the handle's state is looked up).
inline bool is_recorded_option(CURLoption option) { return option_kind(option) != OptionKind::other; }
// Records `value` when `option` is one the shim tracks. Returns true when it is tracked.
bool record_option(HostOptions& options, CURLoption option, OptionValue value);
// CURLOPT_URL's recording, inline: a program sets the URL before every request (the setopt
// wrapper's fast path, issue 27), often one of the same length (the same endpoint): copied over
// the old one then, without std::string's general replace.
inline void record_url(HostOptions& o, const void* value) {
  const char* url = value ? static_cast<const char*>(value) : "";
  const size_t n = std::strlen(url);
  if (n == o.url.size())
    std::memcpy(o.url.data(), url, n);
  else
    o.url.assign(url, n);
}

}  // namespace curlretry::shim
