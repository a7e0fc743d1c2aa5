#include "preload/ld_preload.h"

#include <algorithm>

namespace curlretry::preload {

std::string prepend_preload(const std::string& library, const char* current) {
  if (current == nullptr || *current == '\0') return library;
  // ld.so splits LD_PRELOAD on ':' and ' '.
  const std::string list = current;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find_first_of(": ", start), list.size());
    if (list.compare(start, end - start, library) == 0 && end - start == library.size()) return list;
    start = end + 1;
  }
  return library + ":" + list;
}

}  // namespace curlretry::preload
