#include "shim/once_per_transfer.h"

#include "shim/reentry_guard.h"

namespace curlretry::shim {
namespace {

void set_hsts_read(const real::Api& api, CURL* easy, curl_hstsread_callback fn) {
  if (auto setopt = api.easy_setopt) {
    LibcurlScope scope(api);
    setopt(easy, CURLOPT_HSTSREADFUNCTION, fn);
  }
}

}  // namespace

void OncePerTransfer::before_retry(const real::Api& api, CURL* easy, const HostOptions& host) {
  if (host.hsts_read_fn == nullptr || hsts_read_off_) return;
  set_hsts_read(api, easy, nullptr);
  hsts_read_off_ = true;
}

void OncePerTransfer::restore_now(const real::Api& api, CURL* easy, const HostOptions& host) {
  set_hsts_read(api, easy, host.hsts_read_fn);
  hsts_read_off_ = false;
}

}  // namespace curlretry::shim
