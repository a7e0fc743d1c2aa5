// The certificates a command trusted before a launch hands it curlretry's CA, kept for it and given
// to curlretry's proxy. A company's TLS-inspecting proxy signs every site with a CA of its own, which
// its users give their programs in NODE_EXTRA_CA_CERTS or a store of their own (SSL_CERT_FILE and
// the other variables ca_environment sets). Replacing those with curlretry's CA alone would fail
// every verification: in the command, for the hosts it reaches through a blind tunnel or directly,
// and in curlretry's proxy, for the intercepted ones.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "proxy/local_ca.h"

namespace curlretry::proxy {

struct KeptTrust {
  std::string upstream;  // the command's certificates alone (CURLRETRY_UPSTREAM_CA_FILE); "" when none
  std::vector<std::pair<std::string, std::string>> environment;  // ca_environment's variables, its order
};

// Reads the certificates in the files ca_environment's variables name in this process: each file
// once, at most 8 MiB of it, the system store and curlretry's own CA files left out (a launch inside
// a launched command),
// and only what parses as a certificate (a stray file must not make libcurl refuse every
// verification). With any, writes them in the CA directory under their digest's name: `trust-ID.pem`
// (them alone), `node-ID.pem` (them and our CA, for NODE_EXTRA_CA_CERTS) and `bundle-ID.pem` (the
// system store, them and our CA). Without any, `environment` is ca_environment(paths). The error
// text, empty on success.
std::string keep_command_trust(const CaPaths& paths, KeptTrust* out);

}  // namespace curlretry::proxy
