#!/usr/bin/env bash
# README command 2: install what is missing, build, and run every test (then again under
# the sanitizers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
started=$SECONDS
# Each stage says how long it took: CI limits the whole run to 90 minutes on 2 cores.
timed() {
  local name=$1 t=$SECONDS
  shift
  "$@"
  echo "=== test.sh: $name took $((SECONDS - t)) s ($((SECONDS - started)) s so far)"
}
timed "install-deps" "$root/scripts/install-deps.sh"
timed "build" "$root/scripts/build.sh"
# A test skipped for a package install-deps.sh installs is a failure here (run_module.py).
plain_ctest() { (cd "$build" && CURLRETRY_STRICT_DEPS=1 ctest --output-on-failure -j"$(nproc)" --timeout 900); }
timed "ctest" plain_ctest
# The fuzz targets over their committed seed corpus: a regression pass of seconds (clang build).
timed "fuzz" "$root/scripts/fuzz.sh" --seeds
# curl's own HTTP tests without curlretry, with retries off and with the default policy (issue 18):
# fails on any difference with retries off, any unlisted one with retries on, any hang or crash.
# Fetches and builds curl from Debian's source each time (nothing is cached across CI runs).
# CURLRETRY_SKIP_CURL_SUITE=1 skips it for a quick local run; CI never sets it.
if [ "${CURLRETRY_SKIP_CURL_SUITE:-0}" != 1 ]; then
  timed "curl suite" "$root/scripts/curl-suite.sh" all
fi
# PHP's own ext/curl tests the same three ways (issue 25): under a minute (fetch ~10 s, the three
# runs in parallel ~40 s). CURLRETRY_SKIP_PHP_SUITE=1 skips it for a quick local run; CI never sets it.
if [ "${CURLRETRY_SKIP_PHP_SUITE:-0}" != 1 ]; then
  timed "PHP suite" "$root/scripts/php-suite.sh" all
fi
# The same suite under ASan+UBSan, and the threaded and multi tests under TSan (issue 5).
# CURLRETRY_SKIP_SANITIZERS=1 skips them for a quick local run; CI never sets it.
if [ "${CURLRETRY_SKIP_SANITIZERS:-0}" != 1 ]; then
  timed "sanitizers" "$root/scripts/test-sanitizers.sh" all
fi
echo "=== test.sh: every stage passed in $((SECONDS - started)) s"
