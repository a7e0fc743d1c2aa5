#!/usr/bin/env bash
# Installs the Debian packages curlretry needs to build and test, and only those that are
# missing. Non-interactive; runs as root (or through sudo when it is there).
set -euo pipefail

packages=(
  # build
  cmake g++ make pkg-config
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev
  libcurl4-openssl-dev libssl-dev
  # tests: real hosts of both libcurl flavours
  curl git libcurl3-gnutls python3 python3-pycurl php-cli php-curl
  libuv1-dev libevent-dev libcurl4-doc
  # tests: nghttpx, the HTTP/2 TLS front of the parity sweep
  nghttp2-proxy
  # the fuzz targets' regression pass (libFuzzer)
  clang libclang-rt-14-dev
  # tests/structure/size_check.py: function sizes (readability-function-size)
  clang-tidy
  # scripts/curl-suite.sh: apt-get source, and building curl's tool and test tools (issue 18)
  dpkg-dev autoconf automake libtool perl zlib1g-dev libnghttp2-dev libpsl-dev libidn2-dev
  libbrotli-dev libzstd-dev stunnel4
  # the fleet's Redis store and the server its tests run
  libhiredis-dev redis-server
  # the proxy: Boost.Beast/Asio (headers); its tests' real clients: Node.js fetch and the npm SDKs
  # (scripts/proxy-test-clients.sh installs those from npm into the build tree)
  libboost-dev nodejs busybox-static python3-requests python3-httpx
  # the proxy's launcher reads Codex's config.toml (toml++)
  libtomlplusplus-dev
  # the success path's CI guard (tests/integration/test_success_path.py): callgrind's counts
  valgrind
  # test_agents: the agents' own network namespace (ip; unshare and nsenter are util-linux's), and
  # the users' programs on stacks that never load libcurl (Go's net/http, Python's httpx)
  iproute2 util-linux golang-go
  # test_upstream_proxy: a real proxy of the user's own (Basic auth, CONNECT) to chain through
  tinyproxy-bin
)
# npm: Debian's, unless a Node.js that bundles its own (NodeSource) is installed already.
command -v npm >/dev/null || packages+=(npm)

# shellcheck source=scripts/apt-missing.sh
. "$(dirname "$0")/apt-missing.sh"
find_missing "${packages[@]}"
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

need_root install-deps

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
