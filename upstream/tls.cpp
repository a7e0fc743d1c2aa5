#include "upstream/tls.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>

#include "x509/build.h"
#include "x509/owned.h"

namespace curlretry::upstream {
namespace {

using x509::BioPtr;
using x509::CertPtr;
using x509::KeyPtr;

// fail() (upstream/fail.h) with OpenSSL's queued reason appended.
bool tls_fail(std::string* error, const std::string& what) {
  const std::string message = x509::openssl_error("TLS setup: " + what);
  if (error) *error = message;
  return false;
}

// Self-signed and marked as a CA so that OpenSSL accepts it as the trust anchor given with
// --cacert, while also being a valid serverAuth leaf for localhost and 127.0.0.1.
CertPtr make_certificate(EVP_PKEY* key, const std::string& alt_names) {
  CertPtr cert(X509_new());
  if (!cert) return nullptr;
  bool ok = x509::random_serial(cert.get());

  X509_NAME* name = X509_get_subject_name(cert.get());
  ok = ok && X509_set_version(cert.get(), 2) == 1 &&
       X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
       X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7L * 24 * 3600) != nullptr &&
       X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                  reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0) == 1 &&
       X509_set_issuer_name(cert.get(), name) == 1 && X509_set_pubkey(cert.get(), key) == 1 &&
       x509::add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") &&
       x509::add_extension(cert.get(), cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") &&
       x509::add_extension(cert.get(), cert.get(), NID_ext_key_usage, "serverAuth") &&
       x509::add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash") &&
       x509::add_extension(cert.get(), cert.get(), NID_subject_alt_name, alt_names.c_str()) &&
       X509_sign(cert.get(), key, EVP_sha256()) > 0;
  return ok ? std::move(cert) : nullptr;
}

std::string to_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return {};
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

}  // namespace

TlsContext::~TlsContext() {
  if (ctx_) SSL_CTX_free(ctx_);
}

bool TlsContext::init(const std::vector<std::string>& names, std::string* error) {
  std::string alt_names = "DNS:localhost,IP:127.0.0.1";
  for (const std::string& name : names) {
    // Checked before it joins the SAN text: only letters, digits, '-' and '.' (no ',' or ':').
    const bool ldh = !name.empty() && name.size() <= 253 && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    });
    if (!ldh) {
      if (error) *error = "TLS setup: '" + name + "' is not a DNS name";
      return false;
    }
    alt_names += ",DNS:" + name;
  }
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return tls_fail(error, "generating the P-256 key");
  CertPtr cert = make_certificate(key.get(), alt_names);
  if (!cert) return tls_fail(error, "making the certificate");
  certificate_pem_ = to_pem(cert.get());
  if (certificate_pem_.empty()) return tls_fail(error, "writing the certificate PEM");

  ctx_ = SSL_CTX_new(TLS_server_method());
  if (!ctx_) return tls_fail(error, "SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  // No ALPN callback: clients fall back to HTTP/1.1, the only protocol we speak.
  if (SSL_CTX_use_certificate(ctx_, cert.get()) != 1 || SSL_CTX_use_PrivateKey(ctx_, key.get()) != 1 ||
      SSL_CTX_check_private_key(ctx_) != 1) {
    return tls_fail(error, "loading the key pair");
  }
  return true;
}

}  // namespace curlretry::upstream
