#include "upstream/tls.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <memory>

namespace curlretry::upstream {
namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;

bool fail(std::string* error, const std::string& what) {
  if (error) {
    unsigned long code = ERR_get_error();
    char detail[256] = "no OpenSSL detail";
    if (code != 0) ERR_error_string_n(code, detail, sizeof detail);
    *error = "TLS setup: " + what + ": " + detail;
  }
  ERR_clear_error();
  return false;
}

bool add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

// Self-signed and marked as a CA so that OpenSSL accepts it as the trust anchor given with
// --cacert, while also being a valid serverAuth leaf for localhost and 127.0.0.1.
CertPtr make_certificate(EVP_PKEY* key) {
  CertPtr cert(X509_new());
  if (!cert) return nullptr;
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return nullptr;
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) != nullptr;
  BN_free(bn);

  X509_NAME* name = X509_get_subject_name(cert.get());
  ok = ok && X509_set_version(cert.get(), 2) == 1 &&
       X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
       X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7L * 24 * 3600) != nullptr &&
       X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                  reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0) == 1 &&
       X509_set_issuer_name(cert.get(), name) == 1 && X509_set_pubkey(cert.get(), key) == 1 &&
       add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") &&
       add_extension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") &&
       add_extension(cert.get(), NID_ext_key_usage, "serverAuth") &&
       add_extension(cert.get(), NID_subject_key_identifier, "hash") &&
       add_extension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1") &&
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

bool TlsContext::init(std::string* error) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return fail(error, "generating the P-256 key");
  CertPtr cert = make_certificate(key.get());
  if (!cert) return fail(error, "making the certificate");
  certificate_pem_ = to_pem(cert.get());
  if (certificate_pem_.empty()) return fail(error, "writing the certificate PEM");

  ctx_ = SSL_CTX_new(TLS_server_method());
  if (!ctx_) return fail(error, "SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  // No ALPN callback: clients fall back to HTTP/1.1, the only protocol we speak.
  if (SSL_CTX_use_certificate(ctx_, cert.get()) != 1 || SSL_CTX_use_PrivateKey(ctx_, key.get()) != 1 ||
      SSL_CTX_check_private_key(ctx_) != 1) {
    return fail(error, "loading the key pair");
  }
  return true;
}

}  // namespace curlretry::upstream
