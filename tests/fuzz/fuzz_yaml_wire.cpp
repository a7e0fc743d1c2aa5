// The byte encoding that carries parse_yaml()'s result from the module curlretry-yaml.so into
// the preload library (config/yaml_wire.h). Decoding arbitrary bytes must fail cleanly; a
// decoded tree must encode and decode to the same bytes. The input is also parsed as YAML and
// its encoding round-tripped, the path every config file takes inside a host.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "config/yaml_tree.h"
#include "config/yaml_wire.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry::config;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // Arbitrary bytes as an encoding.
  const auto decoded = decode_yaml_result(bytes);
  const std::string again = encode_yaml_result(decoded);
  const auto twice = decode_yaml_result(again);
  FUZZ_CHECK(decoded.index() == twice.index());
  FUZZ_CHECK(encode_yaml_result(twice) == again);

  // The same bytes as YAML, through the encoding and back.
  const auto parsed = parse_yaml(bytes);
  const std::string wire = encode_yaml_result(parsed);
  const auto back = decode_yaml_result(wire);
  FUZZ_CHECK(parsed.index() == back.index());
  FUZZ_CHECK(encode_yaml_result(back) == wire);
  return 0;
}
