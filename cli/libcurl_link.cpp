#include "cli/libcurl_link.h"

#include <algorithm>
#include <filesystem>

namespace curlretry::cli::doctor {
namespace {

namespace fs = std::filesystem;

std::string tls_flavour(const LoadedObject& libcurl) {
  for (const auto& n : libcurl.info.needed) {
    if (n.rfind("libssl.", 0) == 0) return "OpenSSL";
    if (n.rfind("libgnutls", 0) == 0) return "GnuTLS";
    if (n.rfind("libnss3", 0) == 0) return "NSS";
    if (n.rfind("libmbedtls", 0) == 0) return "mbedTLS";
    if (n.rfind("libwolfssl", 0) == 0) return "wolfSSL";
    if (n.rfind("librustls", 0) == 0) return "rustls";
    if (n.rfind("libbearssl", 0) == 0) return "BearSSL";
  }
  const std::string& name = libcurl.name;
  if (name.find("gnutls") != std::string::npos) return "GnuTLS";
  if (name.find("nss") != std::string::npos) return "NSS";
  if (name.find("openssl") != std::string::npos) return "OpenSSL";
  return "TLS backend unknown";
}

}  // namespace

bool is_libcurl_name(std::string_view name) {
  return name.rfind("libcurl", 0) == 0 && name.find(".so") != std::string_view::npos;
}

std::optional<CurlLink> find_libcurl(const Closure& c) {
  for (const auto& o : c.objects) {
    if (o.parent.empty() || !is_libcurl_name(o.name)) continue;
    CurlLink link;
    link.object = &o;
    link.flavour = tls_flavour(o);
    link.version = o.info.curl_inside == "unknown version" ? "" : o.info.curl_inside;
    if (o.parent == c.objects.front().name) {
      link.needed_by = o.parent + " directly";
    } else {
      std::string chain = o.parent;
      std::string at = o.parent;
      for (int guard = 0; guard < 16; ++guard) {
        const auto it = std::find_if(c.objects.begin(), c.objects.end(), [&](const auto& x) { return x.name == at; });
        if (it == c.objects.end() || it->parent.empty()) break;
        chain += " <- " + it->parent;
        at = it->parent;
      }
      link.needed_by = chain;
    }
    return link;
  }
  return std::nullopt;
}

const LoadedObject* find_embedded_libcurl(const Closure& c) {
  for (const auto& o : c.objects) {
    if (!o.info.curl_inside.empty() && !is_libcurl_name(o.name) && !is_libcurl_name(o.info.soname)) return &o;
  }
  return nullptr;
}

std::string describe_link(const CurlLink& link) {
  std::error_code ec;
  const std::string real = fs::weakly_canonical(link.object->path, ec).string();
  std::string out = link.object->name + " -> " + (ec ? link.object->path : real) + " (";
  if (!link.version.empty()) out += "libcurl " + link.version + ", ";
  out += link.flavour + "), needed by " + link.needed_by;
  return out;
}

}  // namespace curlretry::cli::doctor
