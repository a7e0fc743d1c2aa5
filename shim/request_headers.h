// The program's CURLOPT_HTTPHEADER list: read for rules that match on request headers, and
// copied with some headers replaced (fallback body length, refreshed credential) so that the
// program's own curl_slist is never modified.
#pragma once

#include <curl/curl.h>

#include <string>
#include <utility>
#include <vector>

#include "config/agent.h"

namespace curlretry::shim {

// "Name: value" lines -> (lower-case name, trimmed value). "Name:" (a removed default header)
// is left out; "Name;" (sent empty) gives an empty value.
config::RequestHeaders read_request_headers(const curl_slist* list);

// A curl_slist of our own: the program's lines with some headers replaced (or added when the
// program did not set them). The nodes live as long as this object; libcurl only reads them.
class HeaderListCopy {
 public:
  // `replace`: (header name, new value) pairs; names compare case-insensitively.
  void build(const curl_slist* program, const std::vector<std::pair<std::string, std::string>>& replace);
  curl_slist* list() { return nodes_.empty() ? nullptr : &nodes_.front(); }
  void clear();

 private:
  std::vector<std::string> lines_;
  std::vector<curl_slist> nodes_;
};

}  // namespace curlretry::shim
