#include "shim/request_override.h"

#include "core/ascii.h"
#include "shim/set_real.h"

namespace curlretry::shim {

void RequestOverride::set_header(const std::string& name, std::string value) {
  for (auto& [n, v] : headers_) {
    if (core::ascii::iequals(n, name)) {
      v = std::move(value);
      return;
    }
  }
  headers_.emplace_back(name, std::move(value));
}

void RequestOverride::apply(const real::Api& api, CURL* easy, const HostOptions& host) {
  if (url) {
    set_real(api, easy, CURLOPT_URL, url->c_str());
    url_applied_ = true;
  }
  std::vector<std::pair<std::string, std::string>> replace = headers_;
  if (body) {
    // Size first: libcurl reads the body with the size in force when the body is set.
    set_real(api, easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    set_real(api, easy, CURLOPT_POSTFIELDS, body->data());
    body_applied_ = true;
    // A Content-Length the program wrote itself must follow the new body.
    for (const auto& [name, value] : read_request_headers(host.http_header)) {
      if (name == "content-length") {
        replace.emplace_back("Content-Length", std::to_string(body->size()));
        break;
      }
    }
  }
  if (!replace.empty()) {
    list_.build(host.http_header, replace);
    set_real(api, easy, CURLOPT_HTTPHEADER, list_.list());
    headers_applied_ = true;
  }
}

void RequestOverride::restore(const real::Api& api, CURL* easy, const HostOptions& host) {
  put_back(api, easy, host);
  url.reset();
  body.reset();
  headers_.clear();
  list_.clear();
  url_applied_ = body_applied_ = headers_applied_ = false;
}

void RequestOverride::put_back(const real::Api& api, CURL* easy, const HostOptions& host) const {
  if (url_applied_) set_real(api, easy, CURLOPT_URL, host.url.c_str());
  if (body_applied_) {
    switch (host.post_kind) {
      case HostOptions::Body::pointer:
        set_real(api, easy, CURLOPT_POSTFIELDSIZE_LARGE, host.post_size);
        set_real(api, easy, CURLOPT_POSTFIELDS, host.post_fields);
        break;
      case HostOptions::Body::copy:
        set_real(api, easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(host.post_copy.size()));
        set_real(api, easy, CURLOPT_COPYPOSTFIELDS, host.post_copy.data());
        set_real(api, easy, CURLOPT_POSTFIELDSIZE_LARGE, host.post_size);
        break;
      case HostOptions::Body::none: set_real(api, easy, CURLOPT_POSTFIELDS, static_cast<const char*>(nullptr)); break;
    }
  }
  if (headers_applied_) set_real(api, easy, CURLOPT_HTTPHEADER, host.http_header);
}

}  // namespace curlretry::shim
