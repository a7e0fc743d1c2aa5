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

// Adds a subjectAltName holding exactly one name, typed: an iPAddress for an IPv4 or IPv6 literal,
// else a dNSName taken as the bytes given. Built as a GENERAL_NAME, never as OpenSSL config text,
// so that no character of `host` (',', ':', "IP:", "email:") can add a name of its own. The caller
// validates `host` as a DNS name first.
bool add_subject_alt_name(X509* cert, const std::string& host);

// "what: <OpenSSL's first queued error>", and the queue cleared, so that a later failure does not
// report this one's cause.
std::string openssl_error(const std::string& what);

}  // namespace curlretry::x509
