// TLS for the upstream: a fresh EC P-256 key and a self-signed certificate for localhost /
// 127.0.0.1 made at start (OpenSSL 3 API), so tests never ship or expire a key.
#pragma once

#include <string>
#include <vector>

typedef struct ssl_ctx_st SSL_CTX;

namespace curlretry::upstream {

class TlsContext {
 public:
  TlsContext() = default;
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // `names`: DNS names the certificate carries besides localhost (LDH labels, else an error).
  bool init(const std::vector<std::string>& names, std::string* error);

  SSL_CTX* get() const { return ctx_; }
  // The certificate in PEM: it is its own CA, so clients trust it with `curl --cacert FILE`.
  const std::string& certificate_pem() const { return certificate_pem_; }

 private:
  SSL_CTX* ctx_ = nullptr;
  std::string certificate_pem_;
};

}  // namespace curlretry::upstream
