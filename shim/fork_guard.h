// fork() while another thread holds one of the shim's locks would leave that lock held forever
// in the child. Each lock registers itself here on first use (never at load time), so that it
// is taken before fork and released on both sides after.
#pragma once

#include <mutex>

namespace curlretry::shim {

void guard_across_fork(std::mutex& mutex);

}  // namespace curlretry::shim
