// fork() while another thread holds one of the shim's locks would leave that lock held forever
// in the child. Each lock registers itself here on first use (never at load time), so that it
// is taken before fork and released on both sides after.
#pragma once

#include <mutex>

namespace curlretry::shim {

// Registers `mutex` (before its first use). Safe from any number of threads at once.
void guard_across_fork(std::mutex& mutex);
// How many locks are registered (for tests and `curlretry doctor`-style checks).
int fork_guarded_locks();

}  // namespace curlretry::shim
