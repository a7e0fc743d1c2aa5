// How a proxy proves to `--ensure` that it is this user's curlretry proxy: a random secret in
// the user's private directory (state/private_dir.h), which the proxy reads at start and only
// this user can read. The launcher sends a fresh nonce with its health request; the proxy
// answers HMAC-SHA256(secret, "curlretry-health-v1 ADDR:PORT NONCE"). The secret itself never
// leaves the directory; the address in the message stops a relay to our proxy on another port.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "state/private_dir.h"

namespace curlretry::proxy {

constexpr const char* kSecretFile = "proxy.secret";
constexpr const char* kNonceHeader = "X-Curlretry-Nonce";

// `size` bytes as lower-case hex digits: the secret, nonces, proofs and config digests.
std::string hex(const unsigned char* data, std::size_t size);

// The secret in `dir`, made (32 random bytes, hex) when the file is new; empty and `error` set
// when it cannot be had.
std::string load_or_create_secret(const state::Dir& dir, std::string& error);

// A fresh nonce: 32 random bytes as hex.
std::string make_nonce();

// The proof for `nonce` (hex HMAC-SHA256); empty when `secret` is empty or `nonce` is not 32 to
// 128 hex digits.
std::string health_proof(const std::string& secret, const std::string& address_and_port, std::string_view nonce);

// `,"proof":"…"` for the health body when a nonce came and there is a secret; else "".
std::string health_proof_field(const std::string& secret, const std::string& address_and_port, std::string_view nonce);

}  // namespace curlretry::proxy
