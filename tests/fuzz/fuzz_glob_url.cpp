// Rule matching inputs: glob patterns (config/glob.h) against hosts and paths, and request URLs
// split as curlretry does it: core::split_url (rules, `explain`) and the shim's never-empty
// wrapper of it (the preload library's log lines). Input: pattern, NUL, text.
// Invariants: an invalid pattern matches nothing; a log display never shows a query string, a
// fragment or userinfo.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/glob.h"
#include "core/url.h"
#include "shim/url_parts.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view pattern = input.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? input : input.substr(nul + 1);

  const bool valid = !config::glob_error(pattern).has_value();
  for (bool fold : {false, true}) {
    const bool matched = config::glob_match(pattern, text, fold);
    if (!valid) FUZZ_CHECK(!matched);
  }
  if (valid && pattern.find_first_of("*?[\\") == std::string_view::npos) {
    FUZZ_CHECK(config::glob_match(pattern, pattern, false));  // a literal matches itself
  }

  // A URL with a known secret in the userinfo and the query: neither may reach a display.
  const std::string url = "https://user:S3CR3T@" + std::string(text) + "?token=S3CR3T#S3CR3T";
  for (const std::string_view u : {text, std::string_view(url)}) {
    if (const auto parts = core::split_url(u)) {
      (void)config::glob_match(pattern, parts->host, true);
      (void)config::glob_match(pattern, parts->path, false);
      for (const std::string& shown : {parts->host_path(), parts->display()}) {
        if (u == url && text.find("S3CR3T") == std::string_view::npos)
          FUZZ_CHECK(shown.find("S3CR3T") == std::string::npos);
      }
    }
    const shim::UrlParts parts = shim::split_url(u);
    FUZZ_CHECK(!parts.path.empty() && parts.path.front() == '/');
    FUZZ_CHECK(parts.path.find_first_of("?#") == std::string::npos);
    FUZZ_CHECK(parts.host.find('@') == std::string::npos);
    const std::string shown = parts.display();
    if (u == url && text.find("S3CR3T") == std::string_view::npos)
      FUZZ_CHECK(shown.find("S3CR3T") == std::string::npos);
  }
  return 0;
}
