#include "proxy/command_trust.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "proxy/ca_files.h"
#include "proxy/identity.h"
#include "x509/owned.h"

namespace curlretry::proxy {
namespace {

constexpr std::size_t kFileLimit = 8 * 1024 * 1024;

// The certificates in `pem`, written again as PEM by OpenSSL: keys, CRLs and junk left behind.
std::string certificates(const std::string& pem) {
  std::string out;
  x509::BioPtr in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  x509::BioPtr written(BIO_new(BIO_s_mem()));
  if (!in || !written) return out;
  while (X509* cert = PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr)) {
    PEM_write_bio_X509(written.get(), cert);
    X509_free(cert);
  }
  ERR_clear_error();  // the end of the text is a "no start line" error
  char* data = nullptr;
  const long size = BIO_get_mem_data(written.get(), &data);
  if (size > 0) out.assign(data, static_cast<std::size_t>(size));
  return out;
}

// `path` with its links resolved (as far as it exists), or itself when that fails.
std::string resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : real.string();
}

// The certificates of the files this process's trust variables name, each file once. The system
// store is left out: every file handed on holds it already (a machine that names it in every
// variable, as many CI images do, keeps nothing).
std::string command_certificates(const CaPaths& paths) {
  std::vector<std::string> seen{resolved(system_store())};
  const std::string own = resolved(paths.dir) + "/";
  std::string out;
  for (const auto& [name, ours] : ca_environment(paths)) {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr || *value != '/') continue;
    const std::string path = resolved(value);
    if (path.rfind(own, 0) == 0) continue;  // curlretry's own: a launch inside a launch
    if (std::find(seen.begin(), seen.end(), path) != seen.end()) continue;
    seen.push_back(path);
    out += certificates(read_file(path, kFileLimit));
  }
  return out;
}

}  // namespace

std::string keep_command_trust(const CaPaths& paths, KeptTrust* out) {
  out->upstream.clear();
  out->environment = ca_environment(paths);
  const std::string trust = command_certificates(paths);
  if (trust.empty()) return {};
  unsigned char sum[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(trust.data(), trust.size(), sum, &size, EVP_sha256(), nullptr) != 1) {
    return "cannot digest the certificates the command trusts";
  }
  const std::string id = hex(sum, std::min(size, 6U));
  const std::string ours = read_file(paths.cert);
  std::string store = read_file(system_store());
  if (!store.empty() && store.back() != '\n') store += '\n';
  const std::string upstream = paths.dir + "/trust-" + id + ".pem";
  const std::string node = paths.dir + "/node-" + id + ".pem";
  const std::string bundle = paths.dir + "/bundle-" + id + ".pem";
  // Written when what they should hold changed (the system store changes with package updates),
  // so a launch reads them rather than writing them.
  for (const auto& [path, data] :
       {std::pair{upstream, trust}, std::pair{node, trust + ours}, std::pair{bundle, store + trust + ours}}) {
    if (read_file(path) == data) continue;
    if (std::string e = write_file(path, data, 0644); !e.empty()) return e;
  }
  out->upstream = upstream;
  // The variable that named our CA alone (Node's, which adds to a store of its own) gets it with
  // theirs; those that named a whole store get the whole one.
  for (auto& [name, value] : out->environment) value = value == paths.cert ? node : bundle;
  return {};
}

}  // namespace curlretry::proxy
