// curlretry's own local certificate authority, for intercepting CONNECT to `proxy.intercept`
// hosts: created once by `curlretry proxy ca` in $XDG_DATA_HOME/curlretry/ca (key 0600 in a
// 0700 directory, never sent anywhere), loaded by the proxy, which mints a short-lived leaf
// certificate per intercepted host on first use.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace curlretry::proxy {

struct CaPaths {
  std::string dir;     // ${XDG_DATA_HOME:-$HOME/.local/share}/curlretry/ca
  std::string cert;    // ca.pem: our CA alone (NODE_EXTRA_CA_CERTS adds it to Node's own store)
  std::string key;     // ca-key.pem, 0600
  std::string bundle;  // bundle.pem: the system store plus our CA, for variables that replace the store
};

// Empty paths (and `error` set) when neither XDG_DATA_HOME nor HOME is an absolute path.
CaPaths ca_paths(std::string* error);

// Creates the CA unless it exists (`created` says which), refuses a directory or key that
// another user owns or others can read, and rewrites the bundle from the current system store.
// Returns an error text, empty on success.
std::string ensure_ca(const CaPaths& paths, bool* created);

// The variables a program needs to trust the CA, in the order `curlretry proxy ca` prints them.
std::vector<std::pair<std::string, std::string>> ca_environment(const CaPaths& paths);

class LocalCa {
 public:
  // Loads an existing CA (checking owner and modes as ensure_ca does); nullptr and `error` if none.
  static std::unique_ptr<LocalCa> load(const CaPaths& paths, std::string* error);
  ~LocalCa();
  LocalCa(const LocalCa&) = delete;
  LocalCa& operator=(const LocalCa&) = delete;

  // A TLS server context presenting a leaf for `host` (a DNS name or an IP address literal),
  // minted on first use and kept for a day; nullptr and `error` if OpenSSL fails.
  std::shared_ptr<boost::asio::ssl::context> context_for(const std::string& host, std::string* error);

 private:
  LocalCa() = default;
  struct Minted {
    std::shared_ptr<boost::asio::ssl::context> context;
    std::chrono::steady_clock::time_point at;
  };
  X509* ca_cert_ = nullptr;
  EVP_PKEY* ca_key_ = nullptr;
  EVP_PKEY* leaf_key_ = nullptr;  // one key for every leaf of this process's life
  std::map<std::string, Minted> minted_;
};

}  // namespace curlretry::proxy
