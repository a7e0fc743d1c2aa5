#include "core/fleet_key.h"

#include "core/ascii.h"
#include "core/cooldown.h"

namespace curlretry::core::fleet_key {
namespace {

using ascii::trim;

std::string tag(std::string_view credential) {
  static constexpr char kHex[] = "0123456789abcdef";
  // 32 bits are plenty to tell a handful of keys apart and too few to confirm a guessed key.
  const auto h = static_cast<std::uint32_t>(hash(credential) >> 32);
  std::string out = "key:";
  for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(h >> shift) & 0xf];
  return out;
}

}  // namespace

std::uint64_t hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h == 0 ? 1 : h;
}

std::size_t authority_of(std::string_view url, char* out, std::size_t capacity) {
  // One pass, no library search: this runs for every request the shim sees.
  const char* p = url.data();
  const char* const end = p + url.size();
  bool https = false;
  for (const char* q = p; q < end && q < p + 16; ++q) {
    if (*q == ':') {
      if (end - q >= 3 && q[1] == '/' && q[2] == '/') {
        https = q - p == 5 && ascii::lower(p[4]) == 's';
        p = q + 3;
      }
      break;
    }
    if (*q == '/' || *q == '?' || *q == '#') break;
  }
  const char* host = p;
  const char* colon = nullptr;  // the last ':' outside brackets
  bool bracket = false;
  for (; p < end && *p != '/' && *p != '?' && *p != '#'; ++p) {
    if (*p == '@') {
      host = p + 1;
      colon = nullptr;
      bracket = false;
    } else if (*p == '[') {
      bracket = true;
    } else if (*p == ']') {
      bracket = false;
    } else if (*p == ':' && !bracket) {
      colon = p;
    }
  }
  if (bracket) return 0;  // "[::1" without its ']'
  const char* host_end = colon ? colon : p;
  std::string_view port = colon ? std::string_view(colon + 1, static_cast<std::size_t>(p - colon - 1))
                                : std::string_view();
  if (port.empty()) port = https ? "443" : "80";
  if (host_end > host && host_end[-1] == '.') --host_end;
  const auto host_size = static_cast<std::size_t>(host_end - host);
  if (host_size == 0 || host_size + 1 + port.size() > capacity) return 0;
  std::size_t n = 0;
  for (const char* c = host; c < host_end; ++c) out[n++] = ascii::lower(*c);
  out[n++] = ':';
  for (char c : port) out[n++] = c;
  return n;
}

std::optional<std::string_view> credential_of(std::string_view line) {
  for (std::string_view name : {"authorization", "x-api-key", "api-key"}) {
    if (ascii::istarts_with(line, name) && line.size() > name.size() && line[name.size()] == ':') {
      std::string_view value = trim(line.substr(name.size() + 1));
      if (value.empty()) return std::nullopt;
      return value;
    }
  }
  return std::nullopt;
}

std::string cooldown_key(std::string_view authority, int status, std::optional<std::string_view> credential) {
  if (!cooldown::per_credential(status) || !credential) return std::string(authority);
  return credential_key(authority, *credential);
}

std::string credential_key(std::string_view authority, std::string_view credential) {
  return std::string(authority) + " " + tag(credential);
}

}  // namespace curlretry::core::fleet_key
