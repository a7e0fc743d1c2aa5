// The program's CURLOPT_OPENSOCKETFUNCTION, watched: libcurl reports its CURL_SOCKET_BAD as
// CURLE_COULDNT_CONNECT, the code of a refused connection, which a retry would retry. Returned by
// the program's own callback it is the program's refusal: the attempt is marked, and the decision
// gives up as for any other abort of the host's (docs/CALLBACKS.md). Only a handle on which the
// program set the callback pays for the watch.
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
  const bool want = host.opensocket_fn != nullptr;
  // Nothing to do for the common handle: no callback of the program's, and none of ours on it.
  if (!want && !socket_cb_ && host.opensocket_data == nullptr) return;
  if (want) {
    set_real(*api_, easy_, CURLOPT_OPENSOCKETFUNCTION, &Transfer::on_opensocket);
    set_real(*api_, easy_, CURLOPT_OPENSOCKETDATA, static_cast<void*>(this));
  } else {
    set_real(*api_, easy_, CURLOPT_OPENSOCKETFUNCTION, host.opensocket_fn);
    set_real(*api_, easy_, CURLOPT_OPENSOCKETDATA, host.opensocket_data);
  }
  socket_cb_ = want;
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
