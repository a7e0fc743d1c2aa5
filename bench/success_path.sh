#!/usr/bin/env bash
# The success path's cost (issue 27): callgrind instructions per request, plain libcurl vs the
# preload with the defaults a user gets, easy and multi (1 and 16 in flight), and where the
# added instructions go, by feature. See bench/README.md, "Success path".
#
#   bench/success_path.sh [--requests N1 N2] [--keep]
#
# Uses build/shim/libcurlretry.so and build/upstream/flaky-upstream (or CURLRETRY_LIB and
# FLAKY_UPSTREAM); needs valgrind and cc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$root/bench/success_path.py" --root "$root" "$@"
