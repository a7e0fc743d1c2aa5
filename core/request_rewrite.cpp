#include "core/request_rewrite.h"

#include <cstddef>

#include "core/json_cursor.h"

namespace curlretry::core {
namespace {

// A request body is the program's own; deep nesting is legal (tool schemas nest), so the bound
// is generous. skip_value recurses once per level: 512 small frames.
constexpr int kMaxDepth = 512;

}  // namespace

std::optional<ModelSwap> replace_model(std::string_view body, std::string_view model) {
  JsonCursor c(body, kMaxDepth);
  std::optional<std::pair<std::size_t, std::size_t>> span;  // the model value's raw text
  const bool read = c.object([&](const std::string& key) {
    if (key != "model" || span || c.at_end() || c.peek() != '"') return c.skip_value(1);
    const std::size_t open = c.pos();
    if (!c.string(nullptr)) return false;
    span = std::make_pair(open + 1, c.pos() - open - 2);  // between the quotes, as written
    return true;
  });
  c.skip_space();
  if (!read || !c.at_end() || !span) return std::nullopt;
  ModelSwap swap;
  swap.old_model = std::string(body.substr(span->first, span->second));
  swap.body.reserve(body.size() - span->second + model.size());
  swap.body.append(body.substr(0, span->first));
  swap.body.append(model);
  swap.body.append(body.substr(span->first + span->second));
  return swap;
}

std::optional<std::string> replace_origin(std::string_view url, std::string_view base) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  const auto rest = url.find_first_of("/?#", scheme + 3);
  std::string out(base);
  if (rest == std::string_view::npos) return out;
  out.append(url.substr(rest));
  return out;
}

}  // namespace curlretry::core
