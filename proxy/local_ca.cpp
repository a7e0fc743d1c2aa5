#include "proxy/local_ca.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "proxy/ca_files.h"
#include "proxy/request_rules.h"
#include "state/private_dir.h"
#include "x509/build.h"
#include "x509/owned.h"

namespace curlretry::proxy {
namespace {

using x509::add_extension;
using x509::add_subject_alt_name;
using x509::BioPtr;
using x509::CertPtr;
using x509::KeyPtr;
using x509::openssl_error;
using x509::random_serial;

constexpr long kCaDays = 3650;
constexpr long kLeafSeconds = 2L * 24 * 3600;  // re-minted after a day (context_for)
constexpr std::size_t kMaxMinted = 1024;

bool set_cn(X509_NAME* name, const std::string& cn) {
  return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()), -1,
                                    -1, 0) == 1;
}

CertPtr make_ca_certificate(EVP_PKEY* key) {
  CertPtr cert(X509_new());
  if (!cert) return nullptr;
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  X509_NAME* name = X509_get_subject_name(cert.get());
  const bool ok =
      random_serial(cert.get()) && X509_set_version(cert.get(), 2) == 1 &&
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), kCaDays * 24 * 3600) != nullptr &&
      X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("curlretry local CA"),
                                 -1, -1, 0) == 1 &&
      set_cn(name, std::string("curlretry proxy CA on ") + host) && X509_set_issuer_name(cert.get(), name) == 1 &&
      X509_set_pubkey(cert.get(), key) == 1 &&
      add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
      add_extension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign") &&
      add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash") &&
      add_extension(cert.get(), cert.get(), NID_authority_key_identifier, "keyid:always") &&
      X509_sign(cert.get(), key, EVP_sha256()) > 0;
  return ok ? std::move(cert) : nullptr;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}




std::string create_ca(const CaPaths& paths) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return openssl_error("generating the CA's P-256 key");
  CertPtr cert = make_ca_certificate(key.get());
  if (!cert) return openssl_error("making the CA certificate");
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  if (!key_bio || !cert_bio ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1) {
    return openssl_error("writing the CA as PEM");
  }
  char* data = nullptr;
  const long key_size = BIO_get_mem_data(key_bio.get(), &data);
  const std::string key_pem(data, static_cast<std::size_t>(key_size));
  const long cert_size = BIO_get_mem_data(cert_bio.get(), &data);
  const std::string cert_pem(data, static_cast<std::size_t>(cert_size));
  // The key first: a certificate on disk always has its key.
  if (std::string e = write_file(paths.key, key_pem, 0600); !e.empty()) return e;
  return write_file(paths.cert, cert_pem, 0644);
}

}  // namespace

CaPaths ca_paths(std::string* error) {
  std::string base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    base = std::string(home) + "/.local/share";
  } else {
    if (error) *error = "neither XDG_DATA_HOME nor HOME is an absolute path: nowhere to keep the local CA";
    return {};
  }
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  CaPaths p;
  p.dir = base + "/curlretry/ca";
  p.cert = p.dir + "/ca.pem";
  p.key = p.dir + "/ca-key.pem";
  p.bundle = p.dir + "/bundle.pem";
  return p;
}

std::string ensure_ca(const CaPaths& paths, bool* created) {
  *created = false;
  // The directory must be ours and closed to others: a key anyone else can read or replace
  // would let them mint certificates every program here trusts (state/private_dir.h).
  const state::Dir dir = state::open_private_dir(paths.dir, "", true);
  if (!dir) return dir.error();
  // Two sessions creating the CA at once must not end with one's key beside the other's cert.
  std::string error;
  const int lock = dir.open_file(".lock", O_RDWR | O_CREAT, error);
  if (lock < 0) return error;
  if (::flock(lock, LOCK_EX) != 0) {
    const std::string why = std::strerror(errno);
    ::close(lock);
    return "cannot lock " + paths.dir + "/.lock: " + why;
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{lock};
  const bool have_key = exists(paths.key);
  const bool have_cert = exists(paths.cert);
  if (have_key != have_cert) {
    return "incomplete CA in " + paths.dir + " (" + (have_key ? paths.cert : paths.key) +
           " is missing); remove the directory to create a new one (programs trusting the old CA must be told again)";
  }
  if (!have_key) {
    if (std::string e = create_ca(paths); !e.empty()) return e;
    *created = true;
  }
  if (!LocalCa::load(paths, &error)) return error;
  // Rewritten every time: the system store changes with package updates.
  std::string bundle;
  if (const std::string store = system_store(); !store.empty()) {
    bundle = read_file(store);
    if (!bundle.empty() && bundle.back() != '\n') bundle += '\n';
  }
  bundle += "# curlretry proxy CA (" + paths.cert + ")\n" + read_file(paths.cert);
  return write_file(paths.bundle, bundle, 0644);
}

std::vector<std::pair<std::string, std::string>> ca_environment(const CaPaths& paths) {
  return {{"NODE_EXTRA_CA_CERTS", paths.cert},
          {"SSL_CERT_FILE", paths.bundle},
          {"REQUESTS_CA_BUNDLE", paths.bundle},
          {"GIT_SSL_CAINFO", paths.bundle},
          {"CURL_CA_BUNDLE", paths.bundle}};
}

std::unique_ptr<LocalCa> LocalCa::load(const CaPaths& paths, std::string* error) {
  if (!exists(paths.key) || !exists(paths.cert)) {
    *error = "no local CA in " + (paths.dir.empty() ? std::string("$XDG_DATA_HOME/curlretry/ca") : paths.dir) +
             "; create it with `curlretry proxy ca` (proxy.intercept needs it)";
    return nullptr;
  }
  const state::Dir dir = state::open_private_dir(paths.dir, "");
  if (!dir) {
    *error = dir.error();
    return nullptr;
  }
  const int key_fd = dir.open_file("ca-key.pem", O_RDONLY, *error);
  if (key_fd < 0) return nullptr;
  std::unique_ptr<LocalCa> ca(new LocalCa());
  FILE* f = ::fdopen(key_fd, "r");
  if (f == nullptr) ::close(key_fd);
  if (f != nullptr) {
    ca->ca_key_ = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
    std::fclose(f);
  }
  f = std::fopen(paths.cert.c_str(), "re");
  if (f != nullptr) {
    ca->ca_cert_ = PEM_read_X509(f, nullptr, nullptr, nullptr);
    std::fclose(f);
  }
  if (ca->ca_key_ == nullptr || ca->ca_cert_ == nullptr) {
    *error = openssl_error("cannot read the local CA in " + paths.dir);
    return nullptr;
  }
  if (X509_check_private_key(ca->ca_cert_, ca->ca_key_) != 1) {
    *error = openssl_error(paths.key + " is not the key of " + paths.cert);
    return nullptr;
  }
  ca->leaf_key_ = EVP_EC_gen("P-256");
  if (ca->leaf_key_ == nullptr) {
    *error = openssl_error("generating the leaf key");
    return nullptr;
  }
  return ca;
}

LocalCa::~LocalCa() {
  X509_free(ca_cert_);
  EVP_PKEY_free(ca_key_);
  EVP_PKEY_free(leaf_key_);
}

std::shared_ptr<boost::asio::ssl::context> LocalCa::context_for(const std::string& host, std::string* error) {
  const auto now = std::chrono::steady_clock::now();
  if (auto it = minted_.find(host); it != minted_.end()) {
    if (now - it->second.at < std::chrono::hours(24)) return it->second.context;
    minted_.erase(it);
  }
  if (minted_.size() >= kMaxMinted) minted_.clear();  // a "*" glob must not grow this without bound

  if (!valid_host(host)) {  // the Session checked it already: a name for a certificate is never taken on trust
    *error = "not a DNS name or an IP literal";
    return nullptr;
  }
  CertPtr cert(X509_new());
  const bool ok = cert && random_serial(cert.get()) && X509_set_version(cert.get(), 2) == 1 &&
                  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
                  X509_gmtime_adj(X509_getm_notAfter(cert.get()), kLeafSeconds) != nullptr &&
                  set_cn(X509_get_subject_name(cert.get()), host.substr(0, 64)) &&
                  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert_)) == 1 &&
                  X509_set_pubkey(cert.get(), leaf_key_) == 1 &&
                  add_extension(cert.get(), ca_cert_, NID_basic_constraints, "critical,CA:FALSE") &&
                  add_extension(cert.get(), ca_cert_, NID_key_usage, "critical,digitalSignature") &&
                  add_extension(cert.get(), ca_cert_, NID_ext_key_usage, "serverAuth") &&
                  add_extension(cert.get(), ca_cert_, NID_subject_key_identifier, "hash") &&
                  add_extension(cert.get(), ca_cert_, NID_authority_key_identifier, "keyid:always") &&
                  add_subject_alt_name(cert.get(), host) && X509_sign(cert.get(), ca_key_, EVP_sha256()) > 0;
  if (!ok) {
    *error = openssl_error("minting a certificate for " + host);
    return nullptr;
  }
  auto context = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // HTTP/1.1 is all the intercepting side speaks: pick it whatever else the client offers.
  SSL_CTX_set_alpn_select_cb(
      ctx,
      [](SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
         void*) -> int {
        static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
        unsigned char* selected = nullptr;
        if (SSL_select_next_proto(&selected, outlen, kHttp11, sizeof kHttp11, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
          return SSL_TLSEXT_ERR_NOACK;
        }
        *out = selected;
        return SSL_TLSEXT_ERR_OK;
      },
      nullptr);
  if (SSL_CTX_use_certificate(ctx, cert.get()) != 1 || SSL_CTX_use_PrivateKey(ctx, leaf_key_) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    *error = openssl_error("loading the certificate for " + host);
    return nullptr;
  }
  minted_[host] = Minted{context, now};
  return context;
}

}  // namespace curlretry::proxy
