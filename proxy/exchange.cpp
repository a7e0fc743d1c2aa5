#include "proxy/exchange.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/beast/http/status.hpp>
#include <cstdio>
#include <cstring>

#include "core/ascii.h"
#include "proxy/curl_loop.h"
#include "proxy/headers.h"
#include "proxy/request_rules.h"

namespace http = boost::beast::http;

namespace curlretry::proxy {
namespace {

std::string reason_for(int status) {
  const auto text = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
  return text.empty() || text == "<unknown-status>" ? std::string("Unknown") : std::string(text);
}

std::string field_value(std::string_view text) { return std::string(core::ascii::field_value(text)); }

}  // namespace

Exchange::Exchange(CurlLoop& loop, Sink& sink, UpstreamRequest request, void* owner)
    : loop_(loop), sink_(sink), request_(std::move(request)), owner_(owner) {}

Exchange::~Exchange() {
  if (easy_ != nullptr) {
    if (added_) loop_.remove(easy_);
    loop_.give_back(easy_);  // reset first: the handle forgets header_list_ before it is freed
  }
  curl_slist_free_all(header_list_);
}

bool Exchange::start() {
  easy_ = loop_.take_easy();
  if (easy_ == nullptr) return false;
  CURL* e = easy_;
  curl_easy_setopt(e, CURLOPT_URL, request_.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, this);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  // The user's own proxy when configured, else none: never the proxy variables this process
  // inherited (they name this very proxy in a shell that exports it for every program). No
  // exceptions either (CURLOPT_NOPROXY "" over a NO_PROXY inherited): one rule for every
  // upstream, the same as tunnels and upgrades follow.
  curl_easy_setopt(e, CURLOPT_PROXY, request_.proxy.c_str());
  curl_easy_setopt(e, CURLOPT_NOPROXY, "");
  // The user's proxy's answer to libcurl's CONNECT is not the upstream's response: the header
  // callback below must see the upstream's head only.
  curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
  // libcurl sends a body over 64 KiB (an agent's request: its conversation and tools) through an
  // upload buffer it holds until the transfer ends, which for a stream is its whole life. The
  // default, 64 KiB, was a third of such a stream's memory here; libcurl's smallest, 16 KiB,
  // is one TLS record, and a send of it is no slower on the wire.
  curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
  // Verification stays on: an extra CA file adds to the system store (libcurl's CA path), it
  // does not replace it.
  if (!request_.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, request_.ca_file.c_str());
  // The loopback hop is uncompressed: libcurl negotiates and decodes, so the retry engine reads
  // error bodies in clear (markers, JSON codes) and the client gets identity bytes.
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Exchange::on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Exchange::on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, this);
  if (request_.refuse_loopback) {
    // Checked on the address libcurl is about to connect to, whatever name resolved to it (a
    // literal is refused before this, by the Session).
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Exchange::open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, this);
  }

  const std::string& m = request_.method;
  if (request_.streamed) {
    curl_easy_setopt(e, CURLOPT_READFUNCTION, &Exchange::on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, this);
    // No length (a chunked body): libcurl sends it chunked too.
    const curl_off_t length = request_.streamed_length ? static_cast<curl_off_t>(*request_.streamed_length) : -1;
    if (m == "POST") {
      curl_easy_setopt(e, CURLOPT_POST, 1L);
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, length);
    } else {
      curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, length);
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m.c_str());
    }
  } else if (m == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (m == "GET" && !request_.has_body) {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else {
    if (m != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m.c_str());
    if (request_.has_body || m == "POST") {
      // Kept in request_ for the whole transfer: libcurl re-sends it on every attempt.
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request_.body.size()));
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, request_.body.data());
    }
  }

  set_header_list(e);

  if (loop_.add(e) != CURLM_OK) return false;
  added_ = true;
  // libcurl copied the URL, and the header lines are in header_list_ (the shim keeps its own
  // copies for a retry): the exchange's would only sit there for the stream's life.
  std::string().swap(request_.url);
  decltype(request_.headers)().swap(request_.headers);
  return true;
}

// The client's end-to-end headers as libcurl sends them on every attempt.
void Exchange::set_header_list(CURL* e) {
  bool have_accept = false;
  bool have_content_type = false;
  for (const auto& [name, value] : request_.headers) {
    if (iequals(name, "accept")) have_accept = true;
    if (iequals(name, "content-type")) have_content_type = true;
    // "Name;" is libcurl's way to send a header with an empty value ("Name:" removes it).
    const std::string line = value.empty() ? name + ";" : name + ": " + value;
    header_list_ = curl_slist_append(header_list_, line.c_str());
  }
  // libcurl's own defaults the client did not ask for stay out.
  header_list_ = curl_slist_append(header_list_, "Expect:");
  if (!have_accept) header_list_ = curl_slist_append(header_list_, "Accept:");
  if (!have_content_type) header_list_ = curl_slist_append(header_list_, "Content-Type:");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, header_list_);
}

curl_socket_t Exchange::open_socket(void*, curlsocktype purpose, curl_sockaddr* address) {
  if (purpose != CURLSOCKTYPE_IPCXN || loopback_address(&address->addr)) return CURL_SOCKET_BAD;
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

size_t Exchange::on_header(char* data, size_t size, size_t nmemb, void* userdata) {
  return static_cast<Exchange*>(userdata)->header_line(data, size * nmemb);
}

size_t Exchange::on_write(char* data, size_t size, size_t nmemb, void* userdata) {
  return static_cast<Exchange*>(userdata)->body(data, size * nmemb);
}

size_t Exchange::header_line(const char* data, size_t n) {
  if (head_sent_) return n;  // trailers of a chunked response: not relayed
  const std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line: an interim 1xx, or (libcurl) a response after a redirect or auth round.
    response_headers_.clear();
    status_ = 0;
    const std::size_t sp = line.find(' ');
    if (sp != std::string_view::npos && sp + 4 <= line.size()) {
      for (std::size_t i = sp + 1; i < sp + 4; ++i) {
        if (line[i] < '0' || line[i] > '9') return 0;
        status_ = status_ * 10 + (line[i] - '0');
      }
      reason_ = field_value(line.substr(std::min(line.size(), sp + 4)));
    }
    return n;
  }
  if (line == "\r\n" || line == "\n") {
    if (status_ >= 200) send_head();
    return n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return n;  // folded or junk: dropped
  response_headers_.emplace_back(std::string(line.substr(0, colon)), field_value(line.substr(colon + 1)));
  return n;
}

bool Exchange::body_allowed() const {
  return request_.method != "HEAD" && status_ != 204 && status_ != 304 && !(status_ >= 100 && status_ < 200);
}

void Exchange::send_head() {
  if (head_sent_) return;
  head_sent_ = true;
  std::vector<std::string> listed;
  bool encoded = false;
  bool upstream_chunked = false;
  for (const auto& [name, value] : response_headers_) {
    if (iequals(name, "connection")) {
      auto tokens = connection_tokens(value);
      listed.insert(listed.end(), tokens.begin(), tokens.end());
    }
    if (iequals(name, "content-encoding")) encoded = true;
    if (iequals(name, "transfer-encoding")) upstream_chunked = true;
  }
  std::string head =
      "HTTP/1.1 " + std::to_string(status_) + " " + (reason_.empty() ? reason_for(status_) : reason_) + "\r\n";
  std::string length;
  for (const auto& [name, value] : response_headers_) {
    if (hop_by_hop(name, listed)) continue;
    if (encoded && iequals(name, "content-encoding")) continue;  // libcurl decoded it
    if (framing_header(name)) {
      if (!encoded && !upstream_chunked) length = value;
      continue;
    }
    head += name + ": " + value + "\r\n";
  }
  if (!length.empty()) {
    head += "Content-Length: " + length + "\r\n";
  } else if (body_allowed()) {
    if (request_.client_http11) {
      chunked_ = true;
      head += "Transfer-Encoding: chunked\r\n";
    } else {
      close_delimited_ = true;
    }
  } else if (request_.method != "HEAD" && status_ != 304 && status_ >= 200 && status_ != 204) {
    head += "Content-Length: 0\r\n";
  }
  if (!request_.client_keep_alive || close_delimited_) head += "Connection: close\r\n";
  head += "\r\n";
  sink_.send(std::move(head));
  // Sent: nothing reads them again (trailers are not relayed), and a stream lasts minutes.
  std::vector<std::pair<std::string, std::string>>().swap(response_headers_);
}

size_t Exchange::body(const char* data, size_t n) {
  if (sink_.client_gone()) return 0;  // the client hung up: libcurl ends the transfer (never retried)
  if (sink_.backlog() >= kHighWater) {
    paused_ = true;
    return CURL_WRITEFUNC_PAUSE;  // libcurl offers these bytes again after curl_easy_pause(CONT)
  }
  if (!head_sent_) send_head();
  body_started_ = true;
  if (n == 0) return 0;
  if (chunked_) {
    char size_line[24];
    const int len = std::snprintf(size_line, sizeof size_line, "%zx\r\n", n);
    std::string chunk;
    chunk.reserve(static_cast<std::size_t>(len) + n + 2);
    chunk.append(size_line, static_cast<std::size_t>(len)).append(data, n).append("\r\n");
    sink_.send(std::move(chunk));
  } else {
    sink_.send(std::string(data, n));
  }
  return n;
}

void Exchange::drained() {
  if (!paused_ || easy_ == nullptr) return;
  paused_ = false;
  apply_pause();
}

// curl_easy_pause sets both directions at once: keep the one still waiting paused.
void Exchange::apply_pause() {
  curl_easy_pause(easy_, (paused_ ? CURLPAUSE_RECV : 0) | (upload_paused_ ? CURLPAUSE_SEND : 0));
  loop_.kick();
}

size_t Exchange::on_read(char* buffer, size_t size, size_t nitems, void* userdata) {
  return static_cast<Exchange*>(userdata)->upload(buffer, size * nitems);
}

size_t Exchange::upload(char* buffer, size_t n) {
  const std::size_t available = upload_.size() - upload_offset_;
  if (available > 0) {
    const std::size_t k = std::min(available, n);
    std::memcpy(buffer, upload_.data() + upload_offset_, k);
    upload_offset_ += k;
    if (upload_offset_ == upload_.size()) {
      upload_.clear();
      upload_offset_ = 0;
    }
    if (!upload_done_ && upload_backlog() < kLowWater) sink_.want_body();
    return k;
  }
  if (upload_done_) return 0;
  if (sink_.client_gone()) return CURL_READFUNC_ABORT;
  upload_paused_ = true;
  sink_.want_body();
  return CURL_READFUNC_PAUSE;
}

void Exchange::feed(const char* data, std::size_t n, bool done) {
  upload_.append(data, n);
  upload_done_ = done;
  if (upload_paused_ && easy_ != nullptr && (n > 0 || done)) {
    upload_paused_ = false;
    apply_pause();
  }
}

void Exchange::send_error(int status, const std::string& detail) {
  const std::string body = error_body(detail);
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason_for(status) +
                    "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  if (!request_.client_keep_alive) out += "Connection: close\r\n";
  sink_.send(out + "\r\n" + body);
}

bool Exchange::finish(CURLcode code) {
  if (added_) {
    loop_.remove(easy_);
    added_ = false;
  }
  if (code == CURLE_OK) {
    if (!head_sent_) {
      if (status_ == 0) status_ = 502;  // no HTTP response at all
      send_head();
    }
    if (chunked_) sink_.send("0\r\n\r\n");
    return request_.client_keep_alive && !close_delimited_;
  }
  if (head_sent_) return false;  // cut mid-body: the client sees it cut, as it would directly
  const char* what = curl_easy_strerror(code);
  if (request_.opaque_errors && code != CURLE_URL_MALFORMAT && code != CURLE_PEER_FAILED_VERIFICATION) {
    // Not a configured route: whether the port refused, the host was unknown, filtered or
    // loopback, the answer is the same (no port scanner). A certificate the proxy refused is
    // named: the user needs to know that verification, never off, is why.
    send_error(502, kUnreachable);
    return request_.client_keep_alive;
  }
  switch (code) {
    case CURLE_URL_MALFORMAT: send_error(400, std::string("bad request target: ") + what); break;
    case CURLE_OPERATION_TIMEDOUT: send_error(504, what); break;
    default: send_error(502, what); break;
  }
  return request_.client_keep_alive;
}

}  // namespace curlretry::proxy
