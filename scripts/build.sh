#!/usr/bin/env bash
# Configures and builds curlretry in build/ (or $BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCURLRETRY_WERROR=ON "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
