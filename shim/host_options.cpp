#include "shim/host_options.h"

#include <cstring>

namespace curlretry::shim {

bool HostOptions::is_trampolined(CURLoption option) { return option_kind(option) == OptionKind::trampolined; }

bool HostOptions::is_watched(CURLoption option) { return option_kind(option) == OptionKind::watched; }

bool HostOptions::form_streams() const {
  if (!form_is_body) return false;
  for (const curl_httppost* field = form; field != nullptr; field = field->next) {
    for (const curl_httppost* part = field; part != nullptr; part = part->more) {
      if (part->flags & CURL_HTTPPOST_CALLBACK) return true;
    }
  }
  return false;
}

namespace {

// libcurl's set.method and set.opt_no_body after `option`, as lib/setopt.c (7.88) sets them: the
// last of these options decides, NOBODY's HEAD stays through a POSTFIELDS (request_method()).
void record_method(HostOptions& o, CURLoption option, OptionValue v) {
  using Method = HostOptions::Method;
  switch (option) {
    case CURLOPT_POSTFIELDS:
    case CURLOPT_COPYPOSTFIELDS: o.method = Method::post; return;
    case CURLOPT_HTTPPOST:  // libcurl's POST_FORM and POST_MIME, even for a null pointer
    case CURLOPT_MIMEPOST:
      o.method = Method::post;
      o.no_body = false;
      return;
    case CURLOPT_POST:
    case CURLOPT_UPLOAD:
    case CURLOPT_PUT: {
      const Method on = option == CURLOPT_POST ? Method::post : Method::put;
      o.method = v.number != 0 ? on : Method::get;  // off means GET
      if (v.number != 0) o.no_body = false;
      return;
    }
    case CURLOPT_HTTPGET:
      if (v.number == 0) return;  // off: as it was
      o.method = Method::get;
      o.no_body = false;
      return;
    case CURLOPT_NOBODY:
      o.no_body = v.number != 0;
      if (o.no_body)
        o.method = Method::head;
      else if (o.method == Method::head)
        o.method = Method::get;
      return;
    default: return;
  }
}

// The options that say what the request is (its headers, its body, its method): libcurl's last
// word among the body options wins (a form with stream parts for the upload code, a POSTFIELDS
// body for the fallback).
bool record_request_option(HostOptions& o, CURLoption option, OptionValue v) {
  record_method(o, option, v);
  switch (option) {
    case CURLOPT_HTTPHEADER: o.http_header = static_cast<curl_slist*>(v.pointer); return true;
    case CURLOPT_POSTFIELDS:
      o.post_fields = static_cast<const char*>(v.pointer);
      o.post_kind = v.pointer ? HostOptions::Body::pointer : HostOptions::Body::none;
      o.post_copy.clear();
      o.post_active = true;
      o.form_is_body = o.mime_is_body = false;
      return true;
    case CURLOPT_COPYPOSTFIELDS: {
      // libcurl copies post_size bytes (strlen when unset) now; so do we, up to a bound: a bigger
      // body is no API request whose model a fallback would change.
      constexpr size_t kMaxCopy = 16 * 1024 * 1024;
      const char* data = static_cast<const char*>(v.pointer);
      const size_t n = data == nullptr ? 0 : o.post_size >= 0 ? static_cast<size_t>(o.post_size) : std::strlen(data);
      o.post_fields = nullptr;
      o.post_kind = data && n <= kMaxCopy ? HostOptions::Body::copy : HostOptions::Body::none;
      if (o.post_kind == HostOptions::Body::copy)
        o.post_copy.assign(data, n);
      else
        std::string().swap(o.post_copy);
      o.post_active = true;
      o.form_is_body = o.mime_is_body = false;
      return true;
    }
    case CURLOPT_POSTFIELDSIZE: o.post_size = v.number; return true;
    case CURLOPT_POSTFIELDSIZE_LARGE: o.post_size = v.offset; return true;
    case CURLOPT_POST:
      o.post_active = v.number != 0;
      o.form_is_body = o.mime_is_body = false;
      return true;
    case CURLOPT_HTTPPOST:
      o.form = static_cast<const curl_httppost*>(v.pointer);
      o.form_is_body = o.form != nullptr;
      o.mime_is_body = false;
      if (v.pointer != nullptr) o.post_active = false;
      return true;
    case CURLOPT_MIMEPOST:
      o.form_is_body = false;
      o.mime = static_cast<const curl_mime*>(v.pointer);
      o.mime_is_body = o.mime != nullptr;
      if (v.pointer != nullptr) o.post_active = false;
      return true;
    case CURLOPT_HTTPGET:
    case CURLOPT_NOBODY:
      // Off, these leave the request as it was.
      if (v.number != 0) o.form_is_body = o.mime_is_body = o.post_active = false;
      return true;
    case CURLOPT_UPLOAD:  // off means GET
      o.form_is_body = o.mime_is_body = false;
      if (v.number != 0) o.post_active = false;
      return true;
    case CURLOPT_PUT: o.form_is_body = o.mime_is_body = false; return true;
    case CURLOPT_CUSTOMREQUEST: o.custom_request = v.pointer ? static_cast<const char*>(v.pointer) : ""; return true;
    default: return false;
  }
}

}  // namespace

bool record_option(HostOptions& o, CURLoption option, OptionValue v) {
  switch (option) {
    case CURLOPT_WRITEFUNCTION: o.write_fn = reinterpret_cast<curl_write_callback>(v.function); return true;
    case CURLOPT_WRITEDATA: o.write_data = v.pointer; return true;
    case CURLOPT_HEADERFUNCTION: o.header_fn = reinterpret_cast<curl_write_callback>(v.function); return true;
    case CURLOPT_HEADERDATA: o.header_data = v.pointer; return true;
    case CURLOPT_READFUNCTION: o.read_fn = reinterpret_cast<curl_read_callback>(v.function); return true;
    case CURLOPT_READDATA: o.read_data = v.pointer; return true;
    case CURLOPT_SEEKFUNCTION: o.seek_fn = reinterpret_cast<curl_seek_callback>(v.function); return true;
    case CURLOPT_SEEKDATA: o.seek_data = v.pointer; return true;
    case CURLOPT_XFERINFOFUNCTION: o.xferinfo_fn = reinterpret_cast<curl_xferinfo_callback>(v.function); return true;
    case CURLOPT_PROGRESSFUNCTION: o.progress_fn = reinterpret_cast<curl_progress_callback>(v.function); return true;
    case CURLOPT_XFERINFODATA: o.progress_data = v.pointer; return true;  // == CURLOPT_PROGRESSDATA
    case CURLOPT_NOPROGRESS: o.noprogress = v.number != 0; return true;
    case CURLOPT_HEADER: o.include_header = v.number != 0; return true;
    case CURLOPT_FRESH_CONNECT: o.fresh_connect = v.number != 0; return true;
    case CURLOPT_FOLLOWLOCATION: o.follow_location = v.number != 0; return true;
    case CURLOPT_HSTSREADFUNCTION: o.hsts_read_fn = reinterpret_cast<curl_hstsread_callback>(v.function); return true;
    case CURLOPT_TIMEOUT: o.timeout_ms = v.number > 0 ? v.number * 1000 : 0; return true;
    case CURLOPT_TIMEOUT_MS: o.timeout_ms = v.number > 0 ? v.number : 0; return true;
    case CURLOPT_ERRORBUFFER: o.error_buffer = static_cast<char*>(v.pointer); return true;
    case CURLOPT_URL: record_url(o, v.pointer); return true;
    case CURLOPT_IOCTLFUNCTION: o.ioctl_fn = reinterpret_cast<curl_ioctl_callback>(v.function); return true;
    case CURLOPT_IOCTLDATA: o.ioctl_data = v.pointer; return true;
    case CURLOPT_OPENSOCKETFUNCTION:
      o.opensocket_fn = reinterpret_cast<curl_opensocket_callback>(v.function);
      return true;
    case CURLOPT_OPENSOCKETDATA: o.opensocket_data = v.pointer; return true;
    case CURLOPT_SSL_CTX_FUNCTION: o.ssl_ctx_fn = reinterpret_cast<curl_ssl_ctx_callback>(v.function); return true;
    case CURLOPT_SSL_CTX_DATA: o.ssl_ctx_data = v.pointer; return true;
    case CURLOPT_COOKIEFILE:
    case CURLOPT_COOKIEJAR:
    case CURLOPT_COOKIELIST:
      if (v.pointer != nullptr) o.cookie_engine = true;
      return true;
    case CURLOPT_SHARE: o.shared = v.pointer != nullptr; return true;
    default: return record_request_option(o, option, v);
  }
}

}  // namespace curlretry::shim
