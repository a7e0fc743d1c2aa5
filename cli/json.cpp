#include "cli/json.h"

namespace curlretry::cli {

std::string json_list(const std::vector<std::string>& items, std::string_view separator) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += json_quote(items[i]);
  }
  return out + "]";
}

}  // namespace curlretry::cli
