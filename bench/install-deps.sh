#!/usr/bin/env bash
# Installs what bench/run.sh needs from Debian, and only what is missing: nginx (the upstream and
# one of the two retrying proxies), haproxy (the other), a C compiler and libcurl's headers for
# the load generator, curl (the process-start row), valgrind (callgrind's instruction counts) and
# python3 (the report), iproute2 (`ss`: the idle row waits for the proxies to let go of its streams).
#
# Debian's nginx and haproxy packages start their system services on install (nginx on
# 0.0.0.0:80). The benchmark wants neither, so while installing we put a policy-rc.d in place
# that forbids service starts, unless the machine already has one.
set -euo pipefail

packages=(nginx haproxy gcc libc6-dev libcurl4-openssl-dev curl valgrind python3 iproute2)

# shellcheck source=scripts/apt-missing.sh
. "$(dirname "$0")/../scripts/apt-missing.sh"
find_missing "${packages[@]}"
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

need_root bench/install-deps

policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# placed by curlretry bench/install-deps.sh while installing; removed after\nexit 101\n' |
    "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  placed_policy=1
fi
remove_policy() {
  if [ "$placed_policy" = 1 ]; then "${as_root[@]}" rm -f "$policy"; fi
}
trap remove_policy EXIT

echo "bench/install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
