#!/usr/bin/env bash
# The fleet bench (issues 12, 23): 50 processes at a fixed offered rate through a timeline (healthy,
# full 529 outage, 10 % failures, healthy) for fleet off / machine / Redis; the pacing rows (a lone
# process with 16 threads, processes one after another); 50 persistent-mode processes through a
# whole-host outage and its recovery; 50 processes against a flapping upstream; and the
# success-path cost of the store by instruction count. See bench/README.md, "Fleet". Full run
# about 12 minutes, --quick about 5.
#
#   bench/fleet.sh [--quick] [--workers N] [--rate R] [--modes off,machine,redis] [--rows timeline,pacing,persistent,flapping,cost] [--keep]
#
# Uses build/shim/libcurlretry.so and build/upstream/flaky-upstream (or CURLRETRY_LIB and
# FLAKY_UPSTREAM); redis-server and valgrind when installed (rows without them say so).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$root/bench/fleet.py" --root "$root" "$@"
