#include "config/yaml_wire.h"

#include <cstdint>
#include <cstring>

namespace curlretry::config {
namespace {

void put_u32(std::string& out, std::uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

void put_text(std::string& out, const std::string& s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}

void put_node(std::string& out, const YamlNode& n) {
  out += static_cast<char>(n.kind);
  out += static_cast<char>(n.quoted ? 1 : 0);
  put_u32(out, static_cast<std::uint32_t>(n.at.line));
  put_u32(out, static_cast<std::uint32_t>(n.at.column));
  put_text(out, n.text);
  put_u32(out, static_cast<std::uint32_t>(n.items.size()));
  for (const auto& item : n.items) put_node(out, item);
  put_u32(out, static_cast<std::uint32_t>(n.entries.size()));
  for (const auto& [key, value] : n.entries) {
    put_node(out, key);
    put_node(out, value);
  }
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : in_(bytes) {}
  bool ok() const { return ok_; }

  std::uint8_t byte() {
    if (in_.size() < 1) return fail(), 0;
    std::uint8_t v = static_cast<std::uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return v;
  }
  std::uint32_t u32() {
    if (in_.size() < 4) return fail(), 0;
    std::uint32_t v;
    std::memcpy(&v, in_.data(), 4);
    in_.remove_prefix(4);
    return v;
  }
  std::string text() {
    std::uint32_t n = u32();
    if (!ok_ || in_.size() < n) return fail(), std::string();
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  // Depth is bounded by the parser that encoded it; the reader bounds it again.
  bool node(YamlNode& n, int depth) {
    if (depth > kMaxDepth + 2) return fail(), false;
    std::uint8_t kind = byte();
    if (kind > static_cast<std::uint8_t>(YamlNode::Kind::map)) return fail(), false;
    n.kind = static_cast<YamlNode::Kind>(kind);
    n.quoted = byte() != 0;
    n.at.line = static_cast<int>(u32());
    n.at.column = static_cast<int>(u32());
    n.text = text();
    std::uint32_t items = u32();
    for (std::uint32_t i = 0; ok_ && i < items; ++i) node(n.items.emplace_back(), depth + 1);
    std::uint32_t entries = u32();
    for (std::uint32_t i = 0; ok_ && i < entries; ++i) {
      auto& [key, value] = n.entries.emplace_back();
      node(key, depth + 1);
      node(value, depth + 1);
    }
    return ok_;
  }

 private:
  void fail() { ok_ = false; }
  std::string_view in_;
  bool ok_ = true;
};

}  // namespace

std::string encode_yaml_result(const std::variant<YamlNode, YamlError>& result) {
  std::string out;
  if (const auto* error = std::get_if<YamlError>(&result)) {
    out += 'E';
    out += static_cast<char>(error->has_position ? 1 : 0);
    put_u32(out, static_cast<std::uint32_t>(error->at.line));
    put_u32(out, static_cast<std::uint32_t>(error->at.column));
    put_text(out, error->message);
    return out;
  }
  out += 'N';
  put_node(out, std::get<YamlNode>(result));
  return out;
}

std::variant<YamlNode, YamlError> decode_yaml_result(std::string_view bytes) {
  Reader r(bytes);
  std::uint8_t tag = r.byte();
  if (tag == 'E') {
    YamlError error;
    error.has_position = r.byte() != 0;
    error.at.line = static_cast<int>(r.u32());
    error.at.column = static_cast<int>(r.u32());
    error.message = r.text();
    if (r.ok()) return error;
  } else if (tag == 'N') {
    YamlNode node;
    if (r.node(node, 0)) return node;
  }
  YamlError broken;
  broken.has_position = false;
  broken.message = "internal error: the YAML module returned a malformed result";
  return broken;
}

}  // namespace curlretry::config
