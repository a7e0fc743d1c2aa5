#include "proxy/identity.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/ascii.h"

namespace curlretry::proxy {
namespace {

constexpr std::size_t kSecretBytes = 32;

std::string random_hex(std::size_t bytes) {
  unsigned char buffer[64];
  if (bytes > sizeof buffer || RAND_bytes(buffer, static_cast<int>(bytes)) != 1) return {};
  return hex(buffer, bytes);
}

bool is_secret(const std::string& text) {
  return text.size() == kSecretBytes * 2 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::string hex(const unsigned char* data, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

std::string load_or_create_secret(const state::Dir& dir, std::string& error) {
  const int fd = dir.open_file(kSecretFile, O_RDWR | O_CREAT, error);
  if (fd < 0) return {};
  // Two proxies starting at once: the first writes, the second reads what it wrote.
  ::flock(fd, LOCK_EX);
  std::string text(kSecretBytes * 2 + 2, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  text.resize(core::ascii::strip_trailing(text, "\n").size());
  if (text.empty()) {
    text = random_hex(kSecretBytes);
    const std::string line = text + "\n";
    if (text.empty() || ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
      error = "cannot write " + dir.path() + "/" + kSecretFile + ": " + std::strerror(errno);
      text.clear();
    }
  } else if (!is_secret(text)) {
    error = dir.path() + "/" + kSecretFile + " does not hold a curlretry secret; refusing it: remove it";
    text.clear();
  }
  ::close(fd);
  return text;
}

std::string make_nonce() { return random_hex(32); }

std::string health_proof(const std::string& secret, const std::string& address_and_port, std::string_view nonce) {
  if (secret.empty() || nonce.size() < 32 || nonce.size() > 128 ||
      nonce.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) {
    return {};
  }
  const std::string message = "curlretry-health-v1 " + address_and_port + " " + std::string(nonce);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &size) == nullptr) {
    return {};
  }
  return hex(mac, size);
}

std::string health_proof_field(const std::string& secret, const std::string& address_and_port, std::string_view nonce) {
  const std::string proof = health_proof(secret, address_and_port, nonce);
  return proof.empty() ? std::string() : ",\"proof\":\"" + proof + "\"";
}

}  // namespace curlretry::proxy
