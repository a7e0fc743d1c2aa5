// A transfer's request as curlretry changes it for later attempts (fallback URL or body, a
// refreshed credential header), on top of the program's own options, which come back unchanged
// when the transfer ends. Our copies live here for as long as libcurl may read them.
#pragma once

#include <curl/curl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shim/host_options.h"
#include "shim/real_curl.h"
#include "shim/request_headers.h"

namespace curlretry::shim {

class RequestOverride {
 public:
  std::optional<std::string> url;   // replaces CURLOPT_URL
  std::optional<std::string> body;  // replaces the CURLOPT_(COPY)POSTFIELDS body
  // Replaces (or adds) a request header; a later call for the same name wins.
  void set_header(const std::string& name, std::string value);

  bool empty() const { return !url && !body && headers_.empty(); }
  // Nothing to apply and nothing applied: restore() would do nothing (the success path skips it).
  bool idle() const { return empty() && !url_applied_ && !body_applied_ && !headers_applied_; }
  // Puts the overrides on `easy`, before an attempt.
  void apply(const real::Api& api, CURL* easy, const HostOptions& host);
  // Puts back what apply() changed, as the program set it; forgets the overrides.
  void restore(const real::Api& api, CURL* easy, const HostOptions& host);
  // The same options on another handle (a duplicate made while ours were applied), which must
  // not point into our copies; forgets nothing.
  void put_back(const real::Api& api, CURL* easy, const HostOptions& host) const;

 private:
  std::vector<std::pair<std::string, std::string>> headers_;
  HeaderListCopy list_;
  bool url_applied_ = false;
  bool body_applied_ = false;
  bool headers_applied_ = false;
};

}  // namespace curlretry::shim
