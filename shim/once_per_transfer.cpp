#include "shim/once_per_transfer.h"

#include "shim/set_real.h"

namespace curlretry::shim {

void OncePerTransfer::before_retry(const real::Api& api, CURL* easy, const HostOptions& host) {
  if (host.hsts_read_fn == nullptr || hsts_read_off_) return;
  set_real(api, easy, CURLOPT_HSTSREADFUNCTION, static_cast<curl_hstsread_callback>(nullptr));
  hsts_read_off_ = true;
}

void OncePerTransfer::restore_now(const real::Api& api, CURL* easy, const HostOptions& host) {
  set_real(api, easy, CURLOPT_HSTSREADFUNCTION, host.hsts_read_fn);
  hsts_read_off_ = false;
}

}  // namespace curlretry::shim
