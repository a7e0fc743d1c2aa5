// `curlretry proxy ...`: hands over to the `curlretry-proxy` executable installed beside this one
// (or, in a build tree, in ../proxy/), which preloads libcurlretry.so into itself.
#pragma once

namespace curlretry::cli {

// Replaces this process with curlretry-proxy ARGS (argv[2] on); returns only on failure.
int exec_proxy(int argc, char** argv);

}  // namespace curlretry::cli
