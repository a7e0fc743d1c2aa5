#include "config/yaml_tree.h"

namespace curlretry::config {

std::string_view describe(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::null: return "nothing (null)";
    case YamlNode::Kind::scalar: return node.quoted ? "a quoted string" : "a scalar";
    case YamlNode::Kind::sequence: return "a list";
    case YamlNode::Kind::map: return "a map";
  }
  return "a node";
}

}  // namespace curlretry::config
