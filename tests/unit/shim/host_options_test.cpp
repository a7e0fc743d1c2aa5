// The request's method before the first attempt, from the options as libcurl 7.88 keeps them
// (lib/setopt.c) and picks the request line's method (Curl_http_method in lib/http.c).
#include "shim/host_options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace curlretry::shim {
namespace {

OptionValue number(long n) {
  OptionValue v{};
  v.number = n;
  return v;
}

OptionValue pointer(const void* p) {
  OptionValue v{};
  v.pointer = const_cast<void*>(p);
  return v;
}

std::string method_after(std::initializer_list<std::pair<CURLoption, OptionValue>> options) {
  HostOptions o;
  for (const auto& [option, value] : options) record_option(o, option, value);
  return std::string(request_method(o));
}

TEST(RequestMethod, EachBodyOptionMakesLibcurlsMethod) {
  static const char kFields[] = "a=1";
  EXPECT_EQ(method_after({}), "GET");
  EXPECT_EQ(method_after({{CURLOPT_POSTFIELDS, pointer(kFields)}}), "POST");
  EXPECT_EQ(method_after({{CURLOPT_COPYPOSTFIELDS, pointer(kFields)}}), "POST");
  EXPECT_EQ(method_after({{CURLOPT_POST, number(1)}}), "POST");
  EXPECT_EQ(method_after({{CURLOPT_HTTPPOST, pointer(nullptr)}}), "POST");  // libcurl's POST_FORM all the same
  EXPECT_EQ(method_after({{CURLOPT_MIMEPOST, pointer(nullptr)}}), "POST");
  EXPECT_EQ(method_after({{CURLOPT_UPLOAD, number(1)}}), "PUT");
  EXPECT_EQ(method_after({{CURLOPT_PUT, number(1)}}), "PUT");
  EXPECT_EQ(method_after({{CURLOPT_NOBODY, number(1)}}), "HEAD");
}

TEST(RequestMethod, TheLastWordWinsAsInLibcurl) {
  static const char kFields[] = "a=1";
  EXPECT_EQ(method_after({{CURLOPT_POSTFIELDS, pointer(kFields)}, {CURLOPT_UPLOAD, number(1)}}), "PUT");
  EXPECT_EQ(method_after({{CURLOPT_UPLOAD, number(1)}, {CURLOPT_POSTFIELDS, pointer(kFields)}}), "POST");
  EXPECT_EQ(method_after({{CURLOPT_UPLOAD, number(1)}, {CURLOPT_UPLOAD, number(0)}}), "GET");
  EXPECT_EQ(method_after({{CURLOPT_POST, number(1)}, {CURLOPT_POST, number(0)}}), "GET");
  EXPECT_EQ(method_after({{CURLOPT_POST, number(1)}, {CURLOPT_HTTPGET, number(1)}}), "GET");
  EXPECT_EQ(method_after({{CURLOPT_POST, number(1)}, {CURLOPT_HTTPGET, number(0)}}), "POST");
  // NOBODY's HEAD: undone by an upload, a POST, a form or HTTPGET, not by POSTFIELDS.
  EXPECT_EQ(method_after({{CURLOPT_NOBODY, number(1)}, {CURLOPT_UPLOAD, number(1)}}), "PUT");
  EXPECT_EQ(method_after({{CURLOPT_UPLOAD, number(1)}, {CURLOPT_NOBODY, number(1)}}), "HEAD");
  EXPECT_EQ(method_after({{CURLOPT_NOBODY, number(1)}, {CURLOPT_POSTFIELDS, pointer(kFields)}}), "HEAD");
  EXPECT_EQ(method_after({{CURLOPT_NOBODY, number(1)}, {CURLOPT_HTTPGET, number(1)}}), "GET");
  EXPECT_EQ(method_after({{CURLOPT_NOBODY, number(1)}, {CURLOPT_NOBODY, number(0)}}), "GET");
  EXPECT_EQ(method_after({{CURLOPT_UPLOAD, number(1)}, {CURLOPT_NOBODY, number(0)}}), "PUT");
}

TEST(RequestMethod, CustomRequestWinsOverEverything) {
  static const char kDelete[] = "DELETE";
  EXPECT_EQ(method_after({{CURLOPT_NOBODY, number(1)}, {CURLOPT_CUSTOMREQUEST, pointer(kDelete)}}), "DELETE");
  EXPECT_EQ(method_after({{CURLOPT_CUSTOMREQUEST, pointer(kDelete)}, {CURLOPT_UPLOAD, number(1)}}), "DELETE");
  EXPECT_EQ(method_after({{CURLOPT_CUSTOMREQUEST, pointer(kDelete)},
                          {CURLOPT_CUSTOMREQUEST, pointer(nullptr)},
                          {CURLOPT_UPLOAD, number(1)}}),
            "PUT");
}

}  // namespace
}  // namespace curlretry::shim
