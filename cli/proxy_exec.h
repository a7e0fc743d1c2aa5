// `curlretry proxy ...`: hands over to the `curlretry-proxy` executable installed beside this one
// (or, in a build tree, in ../proxy/), which preloads libcurlretry.so into itself.
#pragma once

#include <string>
#include <vector>

namespace curlretry::cli {

// Replaces this process with curlretry-proxy ARGS (argv[2] on); returns only on failure.
int exec_proxy(int argc, char** argv);

// Replaces this process with curlretry-proxy ARGUMENTS; returns only on failure (1).
int exec_proxy(const std::vector<std::string>& arguments);

}  // namespace curlretry::cli
