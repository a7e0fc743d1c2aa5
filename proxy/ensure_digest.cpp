#include "proxy/ensure_digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "config/include_merge.h"
#include "proxy/identity.h"

namespace curlretry::proxy {
namespace {

// Length-prefixed, so ("ab","c") and ("a","bc") never digest alike.
void add(std::string& message, std::string_view item) {
  message += std::to_string(item.size());
  message += ':';
  message += item;
}

std::string mac_hex(const std::string& secret, std::string_view part, const std::string& message) {
  if (secret.empty()) return {};
  const std::string keyed = "curlretry-config-v1 " + std::string(part) + " " + message;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(keyed.data()), keyed.size(), mac, &size) == nullptr) {
    return {};
  }
  return hex(mac, std::min(size, 16U));
}

// Variables that say where things are, not how to retry: the files part covers CURLRETRY_CONFIG,
// and the library's path, the proxy's re-exec marker and the proxy named to a proxied command's
// children (shim/proxy_layer.h) differ between equal launches.
bool is_setting(std::string_view name) {
  if (name.rfind("CURLRETRY_", 0) != 0 && name.rfind("BILI_REPLAY_", 0) != 0) return false;
  return name != "CURLRETRY_CONFIG" && name != "CURLRETRY_LIBRARY" && name != "CURLRETRY_PROXY_REEXEC" &&
         name.rfind("CURLRETRY_VIA_PROXY", 0) != 0;
}

// The value of `"key":"…"` inside the "config" object of `body` (hex digits only), or "".
std::string field(std::string_view body, std::string_view key) {
  const std::size_t object = body.find("\"config\":{");
  if (object == std::string_view::npos) return {};
  const std::size_t end = body.find('}', object);
  const std::string needle = "\"" + std::string(key) + "\":\"";
  const std::size_t at = body.find(needle, object);
  if (at == std::string_view::npos || at > end) return {};
  const std::size_t start = at + needle.size();
  const std::size_t stop = body.find('"', start);
  return stop == std::string_view::npos ? std::string() : std::string(body.substr(start, stop - start));
}

}  // namespace

ConfigDigest config_digest(const std::string& secret, const config::Config& cfg, char** environment) {
  ConfigDigest out;
  std::string routes;
  for (const config::ProxyRoute& r : cfg.proxy.routes) {
    add(routes, r.name);
    add(routes, r.upstream);
    add(routes, r.env);
  }
  out.routes = mac_hex(secret, "routes", routes);
  std::string intercept;
  for (const std::string& glob : cfg.proxy.intercept) add(intercept, glob);
  out.intercept = mac_hex(secret, "intercept", intercept);
  // The bytes, not only the names: a file edited since the proxy started is another config. Every
  // file read, the `include:`d ones too.
  std::string files;
  for (const std::string& file : cfg.files.empty() ? config::split_config_list(cfg.file) : cfg.files) {
    add(files, file);
    std::ifstream in(file, std::ios::binary);
    add(files, std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  }
  out.files = mac_hex(secret, "files", files);
  std::vector<std::string> variables;
  for (char** e = environment; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry = *e;
    if (is_setting(entry.substr(0, entry.find('=')))) variables.emplace_back(entry);
  }
  std::sort(variables.begin(), variables.end());
  std::string settings;
  for (const std::string& v : variables) add(settings, v);
  out.settings = mac_hex(secret, "settings", settings);
  return out;
}

std::string config_id(const ConfigDigest& digest) {
  if (digest.routes.empty()) return {};
  std::string whole;
  for (const std::string* part : {&digest.routes, &digest.intercept, &digest.files, &digest.settings})
    add(whole, *part);
  unsigned char sum[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(whole.data(), whole.size(), sum, &size, EVP_sha256(), nullptr) != 1) return {};
  return hex(sum, std::min(size, 6U));
}

std::string config_digest_field(const ConfigDigest& digest) {
  if (digest.routes.empty()) return {};
  return ",\"config\":{\"routes\":\"" + digest.routes + "\",\"intercept\":\"" + digest.intercept +
         "\",\"files\":\"" + digest.files + "\",\"settings\":\"" + digest.settings + "\"}";
}

std::vector<std::string> config_differences(const ConfigDigest& wanted, std::string_view health_body) {
  std::vector<std::string> out;
  if (field(health_body, "routes") != wanted.routes) out.emplace_back("routes");
  if (field(health_body, "intercept") != wanted.intercept) out.emplace_back("intercept list");
  if (field(health_body, "files") != wanted.files) out.emplace_back("config files");
  if (field(health_body, "settings") != wanted.settings) out.emplace_back("CURLRETRY_* settings");
  return out;
}

}  // namespace curlretry::proxy
