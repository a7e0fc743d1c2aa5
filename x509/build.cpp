#include "x509/build.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "x509/owned.h"

namespace curlretry::x509 {

bool random_serial(X509* cert) {
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return false;
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  const bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != nullptr;
  BN_free(bn);
  return ok;
}

bool add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

bool add_subject_alt_name(X509* cert, const std::string& host) {
  GENERAL_NAMES* names = sk_GENERAL_NAME_new_null();
  GENERAL_NAME* name = GENERAL_NAME_new();
  bool ok = names != nullptr && name != nullptr;
  unsigned char address[16];
  int length = 0;
  if (inet_pton(AF_INET, host.c_str(), address) == 1)
    length = 4;
  else if (inet_pton(AF_INET6, host.c_str(), address) == 1)
    length = 16;
  if (ok && length != 0) {
    ASN1_OCTET_STRING* ip = ASN1_OCTET_STRING_new();
    ok = ip != nullptr && ASN1_OCTET_STRING_set(ip, address, length) == 1;
    if (ok)
      GENERAL_NAME_set0_value(name, GEN_IPADD, ip);
    else
      ASN1_OCTET_STRING_free(ip);
  } else if (ok) {
    ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
    ok = dns != nullptr && ASN1_STRING_set(dns, host.data(), static_cast<int>(host.size())) == 1;
    if (ok)
      GENERAL_NAME_set0_value(name, GEN_DNS, dns);
    else
      ASN1_IA5STRING_free(dns);
  }
  if (ok) {
    ok = sk_GENERAL_NAME_push(names, name) > 0;
    if (ok) name = nullptr;  // the stack owns it
  }
  ok = ok && X509_add1_ext_i2d(cert, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1;
  GENERAL_NAME_free(name);
  GENERAL_NAMES_free(names);
  return ok;
}

std::string openssl_error(const std::string& what) {
  const unsigned long code = ERR_get_error();
  char detail[256] = "no OpenSSL detail";
  if (code != 0) ERR_error_string_n(code, detail, sizeof detail);
  ERR_clear_error();
  return what + ": " + detail;
}

}  // namespace curlretry::x509
