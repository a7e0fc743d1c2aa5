#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the demo (the real curl against a
# local flaky upstream, without and with curlretry).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
exec "${BUILD_DIR:-$root/build}/cli/curlretry" demo
