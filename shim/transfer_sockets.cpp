// The program's CURLOPT_OPENSOCKETFUNCTION and CURLOPT_SSL_CTX_FUNCTION, watched. libcurl reports
// an open-socket CURL_SOCKET_BAD as CURLE_COULDNT_CONNECT, the code of a refused connection, and
// an SSL_CTX callback's code as the transfer's (CURLE_SSL_CONNECT_ERROR, say): a retry would
// retry both. Returned by the program's own callback it is the program's refusal: the attempt is
// marked, and the decision gives up as for any other abort of the host's (docs/CALLBACKS.md).
// Only a handle on which the program set the callback pays for the watch.
#include <sys/socket.h>

#include "shim/reentry_guard.h"
#include "shim/transfer.h"

namespace curlretry::shim {
namespace {

// Sets a watched callback and its data together (never our function with the program's data),
// and returns libcurl's answer for the one the program set.
template <typename Fn>
CURLcode set_pair(const real::Api& api, CURL* easy, CURLoption fn_option, Fn fn, CURLoption data_option, void* data,
                  CURLoption asked) {
  CURLcode fn_code = CURLE_OK;
  CURLcode data_code = CURLE_OK;
  if (auto setopt = api.easy_setopt) {
    LibcurlScope scope(api);
    fn_code = setopt(easy, fn_option, fn);
    data_code = setopt(easy, data_option, data);
  }
  return asked == data_option ? data_code : fn_code;
}

}  // namespace

CURLcode Transfer::rewatch(CURLoption option) {
  if (option == CURLOPT_OPENSOCKETFUNCTION || option == CURLOPT_OPENSOCKETDATA) {
    socket_cb_ = host.opensocket_fn != nullptr;
    return set_pair(*api_, easy_, CURLOPT_OPENSOCKETFUNCTION,
                    socket_cb_ ? &Transfer::on_opensocket : host.opensocket_fn, CURLOPT_OPENSOCKETDATA,
                    socket_cb_ ? static_cast<void*>(this) : host.opensocket_data, option);
  }
  ssl_ctx_cb_ = host.ssl_ctx_fn != nullptr;
  return set_pair(*api_, easy_, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_cb_ ? &Transfer::on_ssl_ctx : host.ssl_ctx_fn,
                  CURLOPT_SSL_CTX_DATA, ssl_ctx_cb_ ? static_cast<void*>(this) : host.ssl_ctx_data, option);
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
