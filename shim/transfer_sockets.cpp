// The program's CURLOPT_OPENSOCKETFUNCTION and CURLOPT_SSL_CTX_FUNCTION, watched: libcurl reports its CURL_SOCKET_BAD
// as CURLE_COULDNT_CONNECT, the code of a refused connection, which a retry would retry. Returned by the program's own
// callback it is the program's refusal: the attempt is marked, and the decision gives up as for any other abort of the
// host's (docs/CALLBACKS.md). Only a handle on which the program set the callback pays for the watch.
#include <sys/socket.h>

#include "shim/reentry_guard.h"
#include "shim/transfer.h"

namespace curlretry::shim {
namespace {

template <typename V>
void set_real(const real::Api& api, CURL* easy, CURLoption option, V value) {
  if (auto setopt = api.easy_setopt) {
    LibcurlScope scope(api);
    setopt(easy, option, value);
  }
}

}  // namespace

void Transfer::sync_socket_callback() {
  // Nothing to do for the common handle: no callback of the program's, and none of ours on it.
  const bool want = host.opensocket_fn != nullptr;
  if (want || socket_cb_ || host.opensocket_data != nullptr) {
    set_real(*api_, easy_, CURLOPT_OPENSOCKETFUNCTION, want ? &Transfer::on_opensocket : host.opensocket_fn);
    set_real(*api_, easy_, CURLOPT_OPENSOCKETDATA, want ? static_cast<void*>(this) : host.opensocket_data);
    socket_cb_ = want;
  }
  const bool want_ssl = host.ssl_ctx_fn != nullptr;
  if (want_ssl || ssl_ctx_cb_ || host.ssl_ctx_data != nullptr) {
    set_real(*api_, easy_, CURLOPT_SSL_CTX_FUNCTION, want_ssl ? &Transfer::on_ssl_ctx : host.ssl_ctx_fn);
    set_real(*api_, easy_, CURLOPT_SSL_CTX_DATA, want_ssl ? static_cast<void*>(this) : host.ssl_ctx_data);
    ssl_ctx_cb_ = want_ssl;
  }
}

CURLcode Transfer::on_ssl_ctx(CURL* easy, void* ssl_ctx, void* userdata) {
  auto* transfer = static_cast<Transfer*>(userdata);
  if (transfer->host.ssl_ctx_fn == nullptr) return CURLE_OK;  // taken off since the transfer began
  CURLcode code;
  {
    HostScope scope;
    code = transfer->host.ssl_ctx_fn(easy, ssl_ctx, transfer->host.ssl_ctx_data);
  }
  if (code != CURLE_OK && transfer->phase() == Phase::attempting) transfer->attempt_.socket_refused = true;
  return code;
}

curl_socket_t Transfer::on_opensocket(void* userdata, curlsocktype purpose, struct curl_sockaddr* address) {
  auto* transfer = static_cast<Transfer*>(userdata);
  curl_socket_t fd;
  if (transfer->host.opensocket_fn != nullptr) {
    HostScope scope;
    fd = transfer->host.opensocket_fn(transfer->host.opensocket_data, purpose, address);
  } else {
    // Taken off since the transfer began: libcurl's own default.
    fd = socket(address->family, address->socktype, address->protocol);
  }
  if (fd == CURL_SOCKET_BAD && transfer->phase() == Phase::attempting) transfer->attempt_.socket_refused = true;
  return fd;
}

}  // namespace curlretry::shim
