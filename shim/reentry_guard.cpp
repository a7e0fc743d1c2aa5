#include "shim/reentry_guard.h"

namespace curlretry::shim::detail {

constinit __attribute__((tls_model("initial-exec"))) thread_local const real::Api* t_libcurl = nullptr;

}  // namespace curlretry::shim::detail
