// The one JSON grammar (core/json_cursor.h) under its three readers, on any bytes: the error-body
// scan (bodies are the server's), the attempt-log reader, and the fallback's model swap (request
// bodies are the program's). Beyond no crash, leak, UB or timeout: the readers agree on what is
// JSON, and the swap changes the model's bytes and nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include <fuzzer/FuzzedDataProvider.h>

#include "core/body_scan.h"
#include "core/json_cursor.h"
#include "core/json_object.h"
#include "core/json_text.h"
#include "core/request_rewrite.h"
#include "core/utf8.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry::core;

namespace {

// A model name as a fallback list holds one: needs no escaping (request_rewrite.h).
std::string plain_name(FuzzedDataProvider& in) {
  std::string name = in.ConsumeRandomLengthString(24);
  for (char& c : name) {
    const auto u = static_cast<unsigned char>(c);
    c = "abcdefghijklmnopqrstuvwxyz0123456789.-_/"[u % 40];
  }
  return name;
}

bool well_formed(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8::sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string path = in.ConsumeRandomLengthString(16);
  const std::string model = plain_name(in);
  const std::size_t limit = in.ConsumeIntegralInRange<std::size_t>(1, 8);
  const std::string text = in.ConsumeRemainingBytesAsString();

  // Whatever the cursor skips lies inside the text.
  JsonCursor cursor(text, 32);
  if (cursor.skip_value(0)) FUZZ_CHECK(cursor.pos() <= text.size());

  (void)json_scalar_at(text, path);
  FUZZ_CHECK(json_strings_named(text, path, limit).size() <= limit);

  // An object the attempt-log reader accepts is one JSON value with nothing after it, and each
  // of its strings that is well-formed UTF-8 reads back from the escaper's output (the escaper
  // writes U+FFFD for a byte that is not: core/json_text.h).
  if (const auto object = json::read_object(text)) {
    JsonCursor whole(text, 64);
    FUZZ_CHECK(whole.skip_value(0));
    whole.skip_space();
    FUZZ_CHECK(whole.at_end());
    for (const auto& [name, value] : *object) {
      if (value.kind != json::Value::Kind::string || !well_formed(value.text)) continue;
      const auto again = json::read_object("{\"v\":" + json_text::quote(value.text) + "}");
      FUZZ_CHECK(again && *json::string_member(*again, "v") == value.text);
    }
  }

  // The swap changes only the model's bytes: swapping the old value back gives the text again,
  // and the new body's model is the one asked for.
  if (const auto swap = replace_model(text, model)) {
    FUZZ_CHECK(swap->body.size() + swap->old_model.size() == text.size() + model.size());
    const auto back = replace_model(swap->body, swap->old_model);
    FUZZ_CHECK(back && back->body == text && back->old_model == model);
  }
  return 0;
}
