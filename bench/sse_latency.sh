#!/usr/bin/env bash
# What curlretry adds to each event of a 200 text/event-stream (issue 13): bench/sse_latency.c
# run interleaved without and with LD_PRELOAD=libcurlretry.so, through curlretry-proxy (issue 15:
# a reverse route to the measuring process's server) and, for comparison, through HAProxy (when
# installed: the same hop, without retries), then the medians over the runs
# of each variant's per-event p50/p99 (content events; first_: the first content event of each
# stream, which releases the held setup events), and instructions per event from callgrind
# (direct and preload: the whole measuring process).
#
#   bench/sse_latency.sh [--runs N] [--requests N] [--events N] [--gap-us N] [--lib PATH] [--proxy PATH]
#                        [--no-proxy]
#
# The server is a thread of the measuring process on 127.0.0.1; the proxy listens on 127.0.0.1
# and is stopped on exit; nothing outlives the script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=7
requests=20
events=200
gap_us=500
lib=${CURLRETRY_LIB:-$root/build/shim/libcurlretry.so}
crproxy=${CURLRETRY_PROXY:-$root/build/proxy/curlretry-proxy}
with_proxy=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --requests) requests=$2; shift ;;
    --events) events=$2; shift ;;
    --gap-us) gap_us=$2; shift ;;
    --lib) lib=$2; shift ;;
    --proxy) crproxy=$2; shift ;;
    --no-proxy) with_proxy=0 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/sse_latency.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -f "$lib" ] || { echo "bench/sse_latency.sh: $lib not found (build curlretry_shim or pass --lib)" >&2; exit 2; }

[ "$with_proxy" = 0 ] || [ -x "$crproxy" ] ||
  { echo "bench/sse_latency.sh: $crproxy not found (build curlretry-proxy, pass --proxy, or --no-proxy)" >&2; exit 2; }

work=$(mktemp -d /tmp/curlretry-sse-bench.XXXXXX)
proxy_pid=""
haproxy_pid=""
cleanup() {
  local pid
  for pid in $proxy_pid $haproxy_pid; do
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -Wall -Wextra -o "$work/sse_latency" "$root/bench/sse_latency.c" -lcurl -lpthread
# A clean environment: built-in defaults, no user config.
clean=(env -i PATH="$PATH" HOME="$work" XDG_CONFIG_HOME="$work")

variants="direct preload"
if [ "$with_proxy" = 1 ]; then
  # The proxy's upstream is the measuring process's server, on a port fixed for every run.
  sse_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  printf 'version: 1\nproxy:\n  routes:\n    sse: {upstream: "http://127.0.0.1:%s"}\n' "$sse_port" >"$work/proxy.yaml"
  "${clean[@]}" CURLRETRY_LIBRARY="$lib" CURLRETRY_FLEET_DIR="$work/fleet" "$crproxy" --listen 127.0.0.1:0 \
    --config "$work/proxy.yaml" --port-file "$work/proxy.port" </dev/null >/dev/null 2>"$work/proxy.err" &
  proxy_pid=$!
  for _ in $(seq 1 200); do [ -s "$work/proxy.port" ] && break; sleep 0.05; done
  if [ ! -s "$work/proxy.port" ]; then
    echo "bench/sse_latency.sh: the proxy did not start" >&2
    cat "$work/proxy.err" >&2
    exit 1
  fi
  proxy_url="http://127.0.0.1:$(cat "$work/proxy.port")/sse/v1/messages"
  variants="direct preload proxy"
  if command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ]; then
    hp=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    printf 'defaults\n  mode http\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n' \
      >"$work/haproxy.cfg"
    printf 'frontend fe\n  bind 127.0.0.1:%s\n  default_backend be\nbackend be\n  server s 127.0.0.1:%s\n' \
      "$hp" "$sse_port" >>"$work/haproxy.cfg"
    PATH="$PATH:/usr/sbin" haproxy -db -f "$work/haproxy.cfg" </dev/null >/dev/null 2>"$work/haproxy.err" &
    haproxy_pid=$!
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$hp") 2>/dev/null && break; sleep 0.05; done
    haproxy_url="http://127.0.0.1:$hp/v1/messages"
    variants="direct preload proxy haproxy"
  fi
fi

for ((i = 0; i < runs; i++)); do
  for variant in $variants; do
    if [ "$variant" = proxy ]; then
      line=$("${clean[@]}" timeout 300 "$work/sse_latency" "$requests" "$events" "$gap_us" "$sse_port" "$proxy_url")
    elif [ "$variant" = haproxy ]; then
      line=$("${clean[@]}" timeout 300 "$work/sse_latency" "$requests" "$events" "$gap_us" "$sse_port" "$haproxy_url")
    elif [ "$variant" = preload ]; then
      line=$("${clean[@]}" LD_PRELOAD="$lib" timeout 300 "$work/sse_latency" "$requests" "$events" "$gap_us")
    else
      line=$("${clean[@]}" timeout 300 "$work/sse_latency" "$requests" "$events" "$gap_us")
    fi
    echo "variant=$variant run=$i $line" >> "$work/results.tsv"
  done
done

instructions() {  # user-space instructions of one whole run, from callgrind
  local out="$work/cg.$1.$2" preload=()
  [ "$1" = preload ] && preload=(LD_PRELOAD="$lib")
  "${clean[@]}" "${preload[@]}" timeout 600 valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$work/sse_latency" 2 "$2" 0 > /dev/null 2>&1
  sed -n 's/^summary: //p; s/^totals: //p' "$out" | head -1
}
if command -v valgrind > /dev/null; then
  for variant in direct preload; do
    small=$(instructions "$variant" 100)
    big=$(instructions "$variant" 1100)
    echo "variant=$variant instr_per_event=$(( (big - small) / 2000 ))" >> "$work/results.tsv"
  done
fi

python3 - "$work/results.tsv" "$runs" "$requests" "$events" "$gap_us" <<'PY'
import statistics, sys
path, runs, requests, events, gap = sys.argv[1:]
rows = [dict(kv.split("=", 1) for kv in line.split()) for line in open(path)]
print(f"sse_latency: {runs} interleaved runs per variant, {requests} streams x {events} content events, "
      f"{gap} us apart (2 setup events first)")
keys = ["content_p50_us", "content_p99_us", "first_p50_us", "first_p99_us", "setup_p50_us"]
med = {}
variants = [v for v in ("direct", "preload", "proxy", "haproxy") if any(r["variant"] == v for r in rows)]
for variant in variants:
    timed = [r for r in rows if r["variant"] == variant and "content_p50_us" in r]
    med[variant] = {k: statistics.median(float(r[k]) for r in timed) for k in keys}
    failed = sum(int(r["failed"]) for r in timed)
    print(f"{variant:8s} " + "  ".join(f"{k}={med[variant][k]:.1f}" for k in keys) + f"  failed={failed}")
for variant in variants[1:]:
    print(f"added by {variant} " + "  ".join(f"{k}={med[variant][k] - med['direct'][k]:+.1f}" for k in keys))
pairs = {}
for r in rows:
    if "content_p99_us" in r:
        pairs.setdefault(r["run"], {})[r["variant"]] = float(r["content_p99_us"])
for variant in variants[1:]:
    diffs = sorted(p[variant] - p["direct"] for p in pairs.values() if variant in p and "direct" in p)
    print(f"per-run content p99 difference ({variant} - direct), us: {', '.join(f'{d:+.1f}' for d in diffs)}")
for r in rows:
    if "instr_per_event" in r:
        print(f"{r['variant']:8s} instructions per content event (callgrind, whole process): {r['instr_per_event']}")
PY
