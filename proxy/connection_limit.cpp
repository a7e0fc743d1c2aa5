#include "proxy/connection_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace curlretry::proxy {

std::uint64_t raise_open_files_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(limit.rlim_cur);
}

ConnectionLimit connection_limit(std::size_t configured, const std::string& where, std::uint64_t open_files) {
  // Unknown (getrlimit failed): the configured value, or the built-in one, as asked.
  const std::uint64_t fit =
      open_files == 0
          ? UINT64_MAX
          : std::max<std::uint64_t>(1, open_files > kReservedDescriptors ? (open_files - kReservedDescriptors) / 2 : 1);
  ConnectionLimit out;
  if (configured == 0) {
    out.value = static_cast<std::size_t>(std::min<std::uint64_t>(fit, kDefaultMaxConnections));
    return out;
  }
  if (configured <= fit) {
    out.value = configured;
    return out;
  }
  out.value = static_cast<std::size_t>(fit);
  out.warning = where + ": proxy.max_connections " + std::to_string(configured) + " needs about " +
                std::to_string(configured * 2 + kReservedDescriptors) + " descriptors and the open-files limit is " +
                std::to_string(open_files) + " (ulimit -Hn; two per proxied connection): holding at most " +
                std::to_string(out.value);
  return out;
}

}  // namespace curlretry::proxy
