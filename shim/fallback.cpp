// FallbackState, and Transfer's switch to its rule's fallback model or base URL.
#include "shim/fallback.h"

#include <algorithm>

#include "core/request_rewrite.h"
#include "shim/log.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {

bool FallbackState::note(const config::Fallback& fallback, int status, std::string_view body) {
  if (switched_) return false;
  bool overload = std::find(fallback.on_status.begin(), fallback.on_status.end(), status) != fallback.on_status.end();
  for (const auto& marker : fallback.on_markers) {
    if (overload) break;
    overload = body.find(marker) != std::string_view::npos;
  }
  consecutive_ = overload ? consecutive_ + 1 : 0;
  return consecutive_ >= fallback.after;
}

void Transfer::note_overload() {
  if (run_.rule == nullptr || !run_.rule->fallback.enabled()) return;
  const config::Fallback& f = run_.rule->fallback;
  if (!run_.fallback.note(f, attempt_.response.status, attempt_.held_body)) return;
  const std::string after = " after " + std::to_string(run_.fallback.consecutive()) + " overloads";
  const std::string who = run_.method + " " + run_.display + ": ";
  std::string label;
  if (!f.model.empty()) {
    std::string_view body;
    if (host.post_kind == HostOptions::Body::pointer && host.post_fields != nullptr) {
      body = host.post_size >= 0 ? std::string_view(host.post_fields, static_cast<size_t>(host.post_size))
                                 : std::string_view(host.post_fields);
    } else if (host.post_kind == HostOptions::Body::copy) {
      body = host.post_copy;
    }
    const bool posts_fields = host.post_active && host.post_kind != HostOptions::Body::none;
    auto swap = posts_fields ? core::replace_model(body, f.model) : std::nullopt;
    if (swap) {
      log::write(config::LogLevel::info, who + "switching model " + swap->old_model + " -> " + f.model + after);
      override_.body = std::move(swap->body);
      label = "model " + f.model;
    } else {
      log::write(config::LogLevel::debug, who + "fallback model " + f.model +
                                              " not used: the request body is not a JSON object with a top-level "
                                              "\"model\" string");
    }
  }
  if (!f.url.empty()) {
    if (auto url = core::replace_origin(host.url, f.url)) {
      const std::string shown = split_url(f.url).display();
      log::write(config::LogLevel::info, who + "switching to " + shown + after);
      override_.url = std::move(*url);
      label += (label.empty() ? "" : "; ") + std::string("url ") + shown;
    }
  }
  run_.fallback.mark_switched(std::move(label));
}

}  // namespace curlretry::shim
