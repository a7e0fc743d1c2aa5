#!/usr/bin/env bash
# Installs the npm clients the proxy tests drive from the npm registry, versions pinned:
#   proxy-test-clients.sh [DIR]           the SDKs (@anthropic-ai/sdk, openai, undici) and ws (the
#                                         WebSocket client and server of test_proxy_websocket.py) of
#                                         tests/integration/proxy_clients/package.json, into DIR
#                                         (default build/proxy-test-clients)
#   proxy-test-clients.sh --agents [DIR]  the agent CLIs (Claude Code, Pi, oh-my-pi, Codex, Gemini CLI, Qwen Code) of
#                                         tests/integration/proxy_clients/agents/package.json, into
#                                         DIR (default build/proxy-test-agents); about 2 GiB
# Needs node and npm (scripts/install-deps.sh). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
manifest="$here/tests/integration/proxy_clients/package.json"
default="$here/build/proxy-test-clients"
if [[ "${1:-}" == "--agents" ]]; then
  shift
  manifest="$here/tests/integration/proxy_clients/agents/package.json"
  default="$here/build/proxy-test-agents"
fi
dir="${1:-$default}"
mkdir -p "$dir"
# Test modules that ctest runs side by side install into the same folder on first use (test_agents,
# test_agents_signed_in and test_agents_providers, the SDK clients' modules): one npm at a time, the
# others wait for it (flock is util-linux's), so no npm ever reads a tree another is writing.
exec 9>"$dir/.install.lock"
flock 9
cp "$manifest" "$dir/package.json"
cd "$dir"
npm install --no-audit --no-fund --no-save --omit=dev --loglevel=error
echo "proxy-test-clients: installed $(basename "$(dirname "$manifest")")/package.json in $dir"
