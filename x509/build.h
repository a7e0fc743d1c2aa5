// The steps of making a certificate that the flaky upstream and the proxy's local CA share.
#pragma once

#include <openssl/x509.h>

#include <string>

namespace curlretry::x509 {

// A random positive 128-bit serial number, as RFC 5280 asks (unique per issuer).
bool random_serial(X509* cert);

// Adds one X.509v3 extension given in OpenSSL's config syntax ("critical,CA:TRUE"); `issuer`
// is the certificate whose key identifier "keyid:always" refers to (the cert itself when
// self-signed).
bool add_extension(X509* cert, X509* issuer, int nid, const std::string& value);

// "what: <OpenSSL's first queued error>", and the queue cleared, so that a later failure does not
// report this one's cause.
std::string openssl_error(const std::string& what);

}  // namespace curlretry::x509
