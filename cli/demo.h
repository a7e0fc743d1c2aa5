// `curlretry demo`: the flaky upstream on loopback and the real curl, without and with curlretry.
#pragma once

#include <string>

namespace curlretry::cli {

struct DemoOptions {
  std::string curl = "curl";  // the curl binary to run
  std::string library;        // absolute path of libcurlretry.so
  bool tls = false;
};

// Prints what it runs and what each run got; exit status 0 when the run under curlretry got the
// 200 and the plain run did not.
int run_demo(const DemoOptions& options);

}  // namespace curlretry::cli
