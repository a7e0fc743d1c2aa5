// The flaky upstream: an HTTP/1.1 (optionally TLS) server on 127.0.0.1 that plays per-key
// failure scripts such as /s/<key>/503,503,200 (grammar in README.md). Used by the integration
// tests (through the flaky-upstream binary), by benches and by `curlretry demo` (in-process).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace curlretry::upstream {

class FlakyUpstream {
 public:
  struct Options {
    bool tls = false;
    int port = 0;          // 0 = an ephemeral port, see port()
    std::string cert_out;  // with tls: also write the certificate PEM here (for curl --cacert)
    bool verbose = false;  // one stderr line per request: key, attempt, step
    // An IPv4 address of a loopback interface (127.0.0.1, or one a test added to `lo` in a
    // network namespace of its own, to stand in for a provider's host): never a real interface.
    std::string listen_address = "127.0.0.1";
    std::vector<std::string> tls_names;  // extra DNS names in the certificate (api.example.com)
  };

  FlakyUpstream();
  ~FlakyUpstream();  // stops
  FlakyUpstream(const FlakyUpstream&) = delete;
  FlakyUpstream& operator=(const FlakyUpstream&) = delete;

  // Listens on options.listen_address (127.0.0.1) and serves from background threads. False with `error` set otherwise.
  bool start(const Options& options, std::string* error);
  int port() const;
  const std::string& certificate_pem() const;  // empty without TLS

  // Closes the listener and every connection, ends waits (hang, sse), joins. Idempotent.
  void stop();

  std::uint64_t count(const std::string& key) const;  // requests seen by /s/<key>/...
  std::uint64_t served() const;                       // all requests, any path

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace curlretry::upstream
