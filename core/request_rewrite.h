// The two rewrites of a fallback request, as pure text operations: the JSON body's top-level
// "model" and the URL's scheme://authority. Everything else stays byte for byte.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace curlretry::core {

struct ModelSwap {
  std::string body;       // the body with only the model's string value replaced
  std::string old_model;  // the value it had, unescaped only as far as it is plain text
};

// nullopt when `body` is not a JSON object, or has no top-level "model" whose value is a string
// (a nested "model" does not count). `model` must need no escaping.
std::optional<ModelSwap> replace_model(std::string_view body, std::string_view model);

// "https://api.example.com/v1/messages?x" with base "https://backup.example/anthropic" ->
// "https://backup.example/anthropic/v1/messages?x". nullopt when `url` has no scheme://.
std::optional<std::string> replace_origin(std::string_view url, std::string_view base);

}  // namespace curlretry::core
