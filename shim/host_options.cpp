#include "shim/host_options.h"

namespace curlretry::shim {

bool HostOptions::is_trampolined(CURLoption option) {
  switch (option) {
    case CURLOPT_WRITEFUNCTION:
    case CURLOPT_WRITEDATA:
    case CURLOPT_HEADERFUNCTION:
    case CURLOPT_HEADERDATA:
    case CURLOPT_READFUNCTION:
    case CURLOPT_READDATA:
    case CURLOPT_SEEKFUNCTION:
    case CURLOPT_SEEKDATA:
    case CURLOPT_HEADER:
      return true;
    default:
      return false;
  }
}

bool is_recorded_option(CURLoption option) {
  if (HostOptions::is_trampolined(option)) return true;
  switch (option) {
    case CURLOPT_XFERINFOFUNCTION:
    case CURLOPT_PROGRESSFUNCTION:
    case CURLOPT_XFERINFODATA:
    case CURLOPT_NOPROGRESS:
    case CURLOPT_FRESH_CONNECT:
    case CURLOPT_TIMEOUT:
    case CURLOPT_TIMEOUT_MS:
    case CURLOPT_ERRORBUFFER:
    case CURLOPT_URL:
    case CURLOPT_HTTPHEADER:
      return true;
    default:
      return false;
  }
}

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
    case CURLOPT_TIMEOUT: o.timeout_ms = v.number > 0 ? v.number * 1000 : 0; return true;
    case CURLOPT_TIMEOUT_MS: o.timeout_ms = v.number > 0 ? v.number : 0; return true;
    case CURLOPT_ERRORBUFFER: o.error_buffer = static_cast<char*>(v.pointer); return true;
    case CURLOPT_URL: o.url = v.pointer ? static_cast<const char*>(v.pointer) : ""; return true;
    case CURLOPT_HTTPHEADER: o.http_headers = static_cast<const curl_slist*>(v.pointer); return true;
    default: return false;
  }
}

}  // namespace curlretry::shim
