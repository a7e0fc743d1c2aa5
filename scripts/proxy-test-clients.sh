#!/usr/bin/env bash
# Installs the npm clients the proxy tests drive (@anthropic-ai/sdk, openai, versions pinned in
# tests/integration/proxy_clients/package.json) into DIR (default build/proxy-test-clients), from
# the npm registry. Needs node and npm (scripts/install-deps.sh). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$here/build/proxy-test-clients}"
mkdir -p "$dir"
cp "$here/tests/integration/proxy_clients/package.json" "$dir/package.json"
cd "$dir"
npm install --no-audit --no-fund --no-save --omit=dev --loglevel=error
echo "proxy-test-clients: installed in $dir"
