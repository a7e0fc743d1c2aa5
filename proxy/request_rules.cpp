#include "proxy/request_rules.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/beast/http/field.hpp>
#include <cstring>

#include "core/ascii.h"
#include "proxy/headers.h"

namespace http = boost::beast::http;

namespace curlretry::proxy {
namespace {

using core::ascii::lower;

// The codings of every Transfer-Encoding field, in order, lower case, empty list elements dropped
// (RFC 9110 §5.6.1); a coding with parameters keeps them, so that it never equals "chunked".
std::vector<std::string> codings(const RequestHead& head) {
  std::vector<std::string> out;
  for (auto [it, end] = head.equal_range(http::field::transfer_encoding); it != end; ++it) {
    const std::string_view value = it->value();
    std::string token;
    for (std::size_t i = 0; i <= value.size(); ++i) {
      const char c = i < value.size() ? value[i] : ',';
      if (c == ',') {
        token.resize(core::ascii::strip_trailing(token, core::ascii::kBlanks).size());
        if (!token.empty()) out.push_back(token);
        token.clear();
      } else if (!(token.empty() && (c == ' ' || c == '\t'))) {
        token += lower(c);
      }
    }
  }
  return out;
}

// ".", "..", or neither; "%2e" (either case) is a '.' (RFC 3986 §2.3, §6.2.2.2).
int dots(std::string_view segment) {
  int n = 0;
  for (std::size_t i = 0; i < segment.size();) {
    if (segment[i] == '.') {
      ++i;
    } else if (i + 2 < segment.size() && segment[i] == '%' && segment[i + 1] == '2' && lower(segment[i + 2]) == 'e') {
      i += 3;
    } else {
      return 0;
    }
    if (++n > 2) return 0;
  }
  return n;
}

bool ldh_label(std::string_view label) {
  if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
  for (char c : label) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace

std::optional<Refusal> framing_refusal(const RequestHead& head) {
  const std::size_t hosts = head.count(http::field::host);
  if (hosts > 1 || (hosts == 0 && head.version() >= 11)) {
    return Refusal{400, hosts ? "more than one Host header" : "an HTTP/1.1 request needs a Host header"};
  }
  if (head.count(http::field::transfer_encoding) == 0) return std::nullopt;
  if (head.count(http::field::content_length) != 0) {
    return Refusal{400, "Content-Length and Transfer-Encoding together"};
  }
  if (head.version() < 11) return Refusal{400, "Transfer-Encoding in an HTTP/1.0 request"};
  const std::vector<std::string> list = codings(head);
  if (list.empty() || list.back() != "chunked") {
    return Refusal{400, "the final transfer coding is not chunked"};
  }
  if (list.size() > 1) return Refusal{501, "transfer codings other than chunked are not implemented"};
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> end_to_end_headers(const RequestHead& head) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::vector<std::string> listed = connection_tokens(head[http::field::connection]);
  for (const auto& field : head) {
    const std::string_view name = field.name_string();
    if (hop_by_hop(name, listed) || iequals(name, "host") || iequals(name, "content-length") ||
        iequals(name, "expect") || iequals(name, "accept-encoding")) {  // libcurl negotiates
      continue;
    }
    out.emplace_back(std::string(name), std::string(field.value()));
  }
  return out;
}

bool websocket_upgrade(const RequestHead& head) {
  const std::string_view length = head[http::field::content_length];
  if (head.version() != 11 || head.count(http::field::transfer_encoding) != 0 || !(length.empty() || length == "0")) {
    return false;
  }
  auto lists = [](std::string_view value, std::string_view token) {
    for (const auto& t : connection_tokens(value)) {
      if (t == token) return true;
    }
    return false;
  };
  return lists(head[http::field::connection], "upgrade") && lists(head[http::field::upgrade], "websocket");
}

std::optional<std::string> route_rest(std::string_view rest) {
  const std::size_t query = rest.find('?');
  const std::string_view path = rest.substr(0, query);
  bool any = false;
  for (std::size_t b = 0; b < path.size();) {
    const std::size_t e = std::min(path.find('/', b + 1), path.size());
    if (dots(path.substr(b + 1, e - b - 1)) != 0) any = true;
    b = e;
  }
  if (!any) return std::string(rest);  // the common case: the bytes as the client sent them
  std::vector<std::string_view> kept;
  bool trailing = false;  // the output ends with '/' (a dot-segment last, or an empty last segment)
  for (std::size_t b = 0; b < path.size();) {
    const std::size_t e = std::min(path.find('/', b + 1), path.size());
    const std::string_view segment = path.substr(b + 1, e - b - 1);
    const bool last = e == path.size();
    const int n = dots(segment);
    if (n == 2) {
      if (kept.empty()) return std::nullopt;  // above the route's base
      kept.pop_back();
    }
    if (n == 0) kept.push_back(segment);
    trailing = last && n != 0;
    b = e;
  }
  std::string out;
  for (const auto& segment : kept) {
    out += '/';
    out += segment;
  }
  if (trailing || out.empty()) out += '/';
  if (query != std::string_view::npos) out += rest.substr(query);
  return out;
}

bool is_ip_literal(std::string_view host) {
  if (host.empty() || host.size() > 45) return false;
  const std::string text(host);
  unsigned char address[16];
  return inet_pton(AF_INET, text.c_str(), address) == 1 || inet_pton(AF_INET6, text.c_str(), address) == 1;
}

bool valid_host(std::string_view host) {
  if (is_ip_literal(host)) return true;
  if (host.empty() || host.size() > 253) return false;
  for (std::size_t b = 0; b <= host.size();) {
    const std::size_t e = std::min(host.find('.', b), host.size());
    if (!ldh_label(host.substr(b, e - b))) return false;
    b = e + 1;
  }
  return true;
}

std::optional<Authority> parse_authority(std::string_view authority, unsigned default_port) {
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port = after.substr(1);
      if (port.empty()) return std::nullopt;
    }
    if (host.find(':') == std::string_view::npos) return std::nullopt;  // brackets are for IPv6 only
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return std::nullopt;
    if (host.find(':') != std::string_view::npos) return std::nullopt;  // an IPv6 literal needs brackets
  }
  if (!valid_host(host)) return std::nullopt;
  Authority out{std::string(host), default_port};
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    out.port = static_cast<unsigned>(std::stoul(std::string(port)));
  }
  if (out.port == 0 || out.port > 65535) return std::nullopt;
  return out;
}

bool port_allowed(const config::ProxyForward& forward, unsigned port) {
  return forward.allow_ports.empty() ||
         std::find(forward.allow_ports.begin(), forward.allow_ports.end(), port) != forward.allow_ports.end();
}

bool loopback_address(const sockaddr* address) {
  if (address == nullptr) return false;
  auto v4_local = [](const unsigned char* b) { return b[0] == 127 || b[0] == 0; };
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    return v4_local(reinterpret_cast<const unsigned char*>(&in->sin_addr));
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    const unsigned char* b = in6->sin6_addr.s6_addr;
    static const unsigned char kZero[15] = {};
    if (std::memcmp(b, kZero, 15) == 0 && (b[15] == 0 || b[15] == 1)) return true;  // :: and ::1
    static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(b, kMapped, 12) == 0 && v4_local(b + 12);
  }
  return false;
}

bool loopback_host(std::string_view host) {
  std::string name(host);
  std::transform(name.begin(), name.end(), name.begin(), [](char c) { return lower(c); });
  while (!name.empty() && name.back() == '.') name.pop_back();
  if (name == "localhost" || (name.size() > 10 && name.ends_with(".localhost"))) return true;
  sockaddr_in in{};
  sockaddr_in6 in6{};
  if (inet_pton(AF_INET, name.c_str(), &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    return loopback_address(reinterpret_cast<const sockaddr*>(&in));
  }
  if (inet_pton(AF_INET6, name.c_str(), &in6.sin6_addr) == 1) {
    in6.sin6_family = AF_INET6;
    return loopback_address(reinterpret_cast<const sockaddr*>(&in6));
  }
  return false;
}

std::string presented_token(std::string_view value) {
  value = core::ascii::strip_trailing(core::ascii::strip_leading(value, core::ascii::kBlanks), core::ascii::kBlanks);
  const std::size_t space = value.find_first_of(" \t");
  if (space == std::string_view::npos) return {};
  const std::string_view scheme = value.substr(0, space);
  std::string_view credentials = value.substr(space);
  while (!credentials.empty() && (credentials.front() == ' ' || credentials.front() == '\t'))
    credentials.remove_prefix(1);
  if (iequals(scheme, "bearer")) return std::string(credentials);
  if (!iequals(scheme, "basic") || credentials.empty() || credentials.size() % 4 != 0 || credentials.size() > 4096) {
    return {};
  }
  std::string decoded(credentials.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                      reinterpret_cast<const unsigned char*>(credentials.data()), static_cast<int>(credentials.size()));
  if (n < 0) return {};
  std::size_t size = static_cast<std::size_t>(n);
  for (std::size_t i = credentials.size(); i > 0 && credentials[i - 1] == '=' && size > 0; --i) --size;  // padding
  decoded.resize(size);
  const std::size_t colon = decoded.find(':');
  return colon == std::string::npos ? std::string() : decoded.substr(colon + 1);
}

bool same_secret(std::string_view given, std::string_view expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  }
  return diff == 0;
}

}  // namespace curlretry::proxy
