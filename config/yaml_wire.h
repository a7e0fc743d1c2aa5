// A byte encoding of parse_yaml()'s result, for the one place it crosses a library boundary:
// the preload library reads YAML through a module (curlretry-yaml.so) that it loads only when a
// config file exists, so that hosts never pay for yaml-cpp and the C++ runtime at start.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "config/yaml_tree.h"

namespace curlretry::config {

std::string encode_yaml_result(const std::variant<YamlNode, YamlError>& result);
// nullopt-like failure is reported as a YamlError without position.
std::variant<YamlNode, YamlError> decode_yaml_result(std::string_view bytes);

}  // namespace curlretry::config
