#!/usr/bin/env bash
# What curlretry adds to each event of a 200 text/event-stream (issue 13): bench/sse_latency.c
# run interleaved without and with LD_PRELOAD=libcurlretry.so, then the medians over the runs of
# each variant's per-event p50/p99 (content events; first_: the first content event of each
# stream, which releases the held setup events), and instructions per event from callgrind.
#
#   bench/sse_latency.sh [--runs N] [--requests N] [--events N] [--gap-us N] [--lib PATH]
#
# The server is a thread of the measuring process on 127.0.0.1; nothing outlives the script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=7
requests=20
events=200
gap_us=500
lib=${CURLRETRY_LIB:-$root/build/shim/libcurlretry.so}
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --requests) requests=$2; shift ;;
    --events) events=$2; shift ;;
    --gap-us) gap_us=$2; shift ;;
    --lib) lib=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/sse_latency.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -f "$lib" ] || { echo "bench/sse_latency.sh: $lib not found (build curlretry_shim or pass --lib)" >&2; exit 2; }

work=$(mktemp -d /tmp/curlretry-sse-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -Wextra -o "$work/sse_latency" "$root/bench/sse_latency.c" -lcurl -lpthread
# A clean environment: built-in defaults, no user config.
clean=(env -i PATH="$PATH" HOME="$work" XDG_CONFIG_HOME="$work")

for ((i = 0; i < runs; i++)); do
  for variant in direct preload; do
    if [ "$variant" = preload ]; then
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
for variant in ("direct", "preload"):
    timed = [r for r in rows if r["variant"] == variant and "content_p50_us" in r]
    med[variant] = {k: statistics.median(float(r[k]) for r in timed) for k in keys}
    failed = sum(int(r["failed"]) for r in timed)
    print(f"{variant:8s} " + "  ".join(f"{k}={med[variant][k]:.1f}" for k in keys) + f"  failed={failed}")
print("added    " + "  ".join(f"{k}={med['preload'][k] - med['direct'][k]:+.1f}" for k in keys))
pairs = {}
for r in rows:
    if "content_p99_us" in r:
        pairs.setdefault(r["run"], {})[r["variant"]] = float(r["content_p99_us"])
diffs = sorted(p["preload"] - p["direct"] for p in pairs.values() if len(p) == 2)
print(f"per-run content p99 difference (preload - direct), us: {', '.join(f'{d:+.1f}' for d in diffs)}")
for r in rows:
    if "instr_per_event" in r:
        print(f"{r['variant']:8s} instructions per content event (callgrind, whole process): {r['instr_per_event']}")
PY
