// One proxied request: a libcurl easy handle on the shared multi handle, whose response is
// relayed to the client as libcurl hands it over. With libcurlretry.so preloaded into this
// process, libcurl's callbacks here see what any preloaded program sees: exactly one response
// per transfer (the lucky attempt, or the final one byte for byte), headers held until the
// commit point, a held body for a failure candidate. Nothing in this file decides about retries.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace curlretry::proxy {

class CurlLoop;

// Where an exchange's bytes go: the client connection.
class Sink {
 public:
  virtual void send(std::string bytes) = 0;
  virtual std::size_t backlog() const = 0;  // bytes queued, not yet written to the client
  virtual bool client_gone() const = 0;
  // A streamed request body ran dry: read more of it from the client.
  virtual void want_body() = 0;

 protected:
  ~Sink() = default;
};

struct UpstreamRequest {
  std::string method;
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // end to end only
  std::string body;
  bool has_body = false;  // the client framed a body (even an empty one)
  // A body above proxy.max_body_bytes: not kept here, fed through feed() as the client sends it
  // and handed to libcurl by a read callback (the shim's upload rules decide whether it can be
  // replayed).
  bool streamed = false;
  std::optional<std::uint64_t> streamed_length;  // none: the client's body was chunked
  std::string ca_file;                           // proxy.upstream_ca_file: trusted besides the system store
  std::string proxy;                             // proxy.upstream_proxy: "" to connect directly
  bool client_http11 = true;
  bool client_keep_alive = true;
  // A forward or CONNECT target rather than a configured route: loopback addresses are refused
  // at connect time (proxy.forward.allow_loopback), and a failure to reach it is reported as
  // kUnreachable whatever the cause.
  bool refuse_loopback = false;
  bool opaque_errors = false;
};

// The one detail a client gets when a non-route target cannot be reached.
inline constexpr const char* kUnreachable = "the upstream could not be reached";

class Exchange {
 public:
  // Above `kHighWater` bytes queued for the client, the upstream transfer pauses.
  static constexpr std::size_t kHighWater = 1024 * 1024;
  static constexpr std::size_t kLowWater = 256 * 1024;

  Exchange(CurlLoop& loop, Sink& sink, UpstreamRequest request, void* owner);
  ~Exchange();  // takes the transfer out of the multi handle if it still runs
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // False: libcurl refused the transfer (the caller answers 502).
  bool start();
  // libcurl's result for the transfer. Returns whether the client connection can carry another
  // request (false: the response was cut, or is delimited by closing).
  bool finish(CURLcode code);
  // The client's backlog fell below kLowWater: a paused transfer goes on.
  void drained();
  // The next piece of a streamed request body (`done`: it was the last).
  void feed(const char* data, std::size_t n, bool done);
  std::size_t upload_backlog() const { return upload_.size() - upload_offset_; }
  void* owner() const { return owner_; }

 private:
  void set_header_list(CURL* e);
  static curl_socket_t open_socket(void* clientp, curlsocktype purpose, curl_sockaddr* address);
  static size_t on_header(char* data, size_t size, size_t nmemb, void* userdata);
  static size_t on_write(char* data, size_t size, size_t nmemb, void* userdata);
  static size_t on_read(char* buffer, size_t size, size_t nitems, void* userdata);
  size_t upload(char* buffer, size_t n);
  void apply_pause();
  size_t header_line(const char* data, size_t n);
  size_t body(const char* data, size_t n);
  void send_head();
  void send_error(int status, const std::string& detail);
  bool body_allowed() const;

  CurlLoop& loop_;
  Sink& sink_;
  UpstreamRequest request_;
  void* owner_;
  CURL* easy_ = nullptr;
  curl_slist* header_list_ = nullptr;
  bool added_ = false;
  bool paused_ = false;         // receiving: the client's backlog is full
  bool upload_paused_ = false;  // sending: the client has not sent more of the body yet
  std::string upload_;
  std::size_t upload_offset_ = 0;
  bool upload_done_ = false;

  // The response as libcurl delivers it.
  int status_ = 0;
  std::string reason_;
  std::vector<std::pair<std::string, std::string>> response_headers_;
  bool head_sent_ = false;
  bool chunked_ = false;  // to the client
  bool close_delimited_ = false;
  bool body_started_ = false;
};

}  // namespace curlretry::proxy
