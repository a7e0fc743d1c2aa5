// The preload library's response path, end to end through its own code (shim/transfer.cpp):
// header lines as libcurl hands them to a header callback (status lines, Retry-After,
// retry-after-ms, x-should-retry, anything else), body chunks to the write callback, the end of
// the attempt with some CURLcode, and the retry/give-up decision, for several attempts. The
// status-line and header parsing of the shim is private to transfer.cpp, so it is reached the way
// libcurl reaches it: through Transfer's callbacks. libcurl itself is replaced by a null API
// (no setopt) and a getinfo that answers from the input.
//
// Invariant (DESIGN §3.1, one response per transfer): the host's header and write callbacks see
// nothing from an attempt that is retried, and exactly the header lines and the accepted body
// bytes of the final attempt, in order.
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "config/yaml_loader.h"
#include "shim/log.h"
#include "shim/real_curl.h"
#include "shim/runtime.h"
#include "shim/transfer.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry;

namespace {

struct Host {
  std::string headers;
  std::string body;
};

size_t host_header(char* data, size_t size, size_t nmemb, void* userdata) {
  static_cast<Host*>(userdata)->headers.append(data, size * nmemb);
  return size * nmemb;
}
size_t host_write(char* data, size_t size, size_t nmemb, void* userdata) {
  static_cast<Host*>(userdata)->body.append(data, size * nmemb);
  return size * nmemb;
}

// What getinfo reports for the attempt being played.
struct Info {
  std::string url;
  const char* method = "POST";
  long response_code = 0;
  long os_errno = 0;
  const char* content_type = nullptr;  // "text/event-stream" lets the stream hold take part
} g_info;

// libcurl's own signature (an enum before the `...`, as curl_easy_getinfo has it).
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wvarargs"
CURLcode fake_getinfo(CURL*, CURLINFO info, ...) {
  va_list ap;
  va_start(ap, info);
  CURLcode rc = CURLE_OK;
  switch (info) {
    case CURLINFO_EFFECTIVE_URL: *va_arg(ap, const char**) = g_info.url.c_str(); break;
    case CURLINFO_EFFECTIVE_METHOD: *va_arg(ap, const char**) = g_info.method; break;
    case CURLINFO_RESPONSE_CODE: *va_arg(ap, long*) = g_info.response_code; break;
    case CURLINFO_OS_ERRNO: *va_arg(ap, long*) = g_info.os_errno; break;
    case CURLINFO_CONTENT_TYPE: *va_arg(ap, const char**) = g_info.content_type; break;
    default: rc = CURLE_UNKNOWN_OPTION; break;
  }
  va_end(ap);
  return rc;
}
#pragma clang diagnostic pop

constexpr CURLcode kCodes[] = {CURLE_OK,           CURLE_RECV_ERROR,        CURLE_SEND_ERROR,
                               CURLE_GOT_NOTHING,  CURLE_PARTIAL_FILE,      CURLE_OPERATION_TIMEDOUT,
                               CURLE_COULDNT_CONNECT, CURLE_SSL_CONNECT_ERROR, CURLE_HTTP2_STREAM,
                               CURLE_ABORTED_BY_CALLBACK, CURLE_HTTP_RETURNED_ERROR, CURLE_URL_MALFORMAT};

// One header line as libcurl delivers it: CRLF- or LF-terminated (the last line of a response
// may come without, when the connection dies).
std::string header_line(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return "HTTP/1.1 " + std::to_string(in.ConsumeIntegralInRange<int>(100, 599)) + " X\r\n";
    case 1: return "HTTP/2 " + std::to_string(in.ConsumeIntegralInRange<int>(0, 999)) + "\r\n";
    case 2: return "Retry-After: " + in.ConsumeRandomLengthString(40) + "\r\n";
    case 3: return "retry-after-ms: " + in.ConsumeRandomLengthString(24) + "\r\n";
    case 4: return "X-Should-Retry: " + in.ConsumeRandomLengthString(8) + "\r\n";
    case 5: return "\r\n";
    case 6: return in.ConsumeRandomLengthString(64) + "\n";
    default: return in.ConsumeRandomLengthString(64);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = [] {
    config::Settings off;
    off.log_level = config::LogLevel::off;
    shim::log::configure(off);
    return true;
  }();
  (void)quiet;
  FuzzedDataProvider in(data, size);

  shim::Runtime runtime;
  runtime.active = true;
  runtime.config = config::builtin_config();
  core::Policy& policy = runtime.config.defaults;
  policy.max_attempts = in.ConsumeIntegralInRange<int>(1, 5);
  policy.backoff.base = core::Millis{0};
  policy.honor_retry_after = in.ConsumeBool();
  policy.body_window = in.ConsumeIntegralInRange<std::size_t>(0, 8192);
  policy.codes.push_back(core::CodeTable{"error.code", {"1302"}, {"1113"}});
  runtime.config.settings.max_error_body = in.ConsumeIntegralInRange<std::size_t>(0, 4096);

  shim::real::Api api;  // no libcurl: setopt calls are skipped, getinfo answers from the input
  api.easy_getinfo = &fake_getinfo;
  g_info.url = "http://user:pw@api.example/v1/" + in.ConsumeRandomLengthString(16) + "?key=secret";
  g_info.method = in.ConsumeBool() ? "POST" : "GET";

  int handle = 0;
  shim::Transfer transfer(reinterpret_cast<CURL*>(&handle), &api);
  Host host;
  transfer.host.url = g_info.url;
  transfer.host.header_fn = &host_header;
  transfer.host.header_data = &host;
  transfer.host.write_fn = &host_write;
  transfer.host.write_data = &host;
  FUZZ_CHECK(transfer.begin(runtime, true));  // driven as curl_easy_perform drives it

  for (int attempt = 1; attempt <= 6; ++attempt) {
    std::string sent_headers, accepted_body;
    CURLcode code = kCodes[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kCodes) - 1)];
    g_info.response_code = in.ConsumeIntegralInRange<long>(0, 599);
    g_info.os_errno = in.ConsumeBool() ? 104 /* ECONNRESET */ : 0;
    g_info.content_type = in.ConsumeBool() ? "text/event-stream" : nullptr;

    const int lines = in.ConsumeIntegralInRange<int>(0, 12);
    for (int i = 0; i < lines; ++i) {
      std::string line = header_line(in);
      if (line.empty()) continue;  // libcurl never hands over an empty line
      sent_headers += line;
      FUZZ_CHECK(shim::Transfer::on_header(line.data(), 1, line.size(), &transfer) == line.size());
    }
    const int chunks = in.ConsumeIntegralInRange<int>(0, 8);
    for (int i = 0; i < chunks; ++i) {
      std::string chunk = in.ConsumeRandomLengthString(in.ConsumeBool() ? 64 : CURL_MAX_WRITE_SIZE);
      if (in.ConsumeBool() && !chunk.empty()) chunk[chunk.size() / 2] = '\0';  // NUL bytes in bodies
      if (chunk.empty()) continue;
      const size_t r = shim::Transfer::on_write(chunk.data(), 1, chunk.size(), &transfer);
      if (r != chunk.size()) {
        FUZZ_CHECK(r == 0);  // the shim's own stop of this attempt
        code = CURLE_WRITE_ERROR;
        break;
      }
      accepted_body += chunk;
    }
    const shim::Transfer::Step step = transfer.finish_attempt(code);
    FUZZ_CHECK(!step.paused);  // this host never pauses
    if (step.retry) {
      FUZZ_CHECK(step.delay.count() >= 0);
      FUZZ_CHECK(host.headers.empty() && host.body.empty());
      transfer.prepare_next_attempt();
      continue;
    }
    FUZZ_CHECK(host.headers == sent_headers);
    FUZZ_CHECK(host.body == accepted_body);
    break;
  }
  transfer.end();
  return 0;
}
