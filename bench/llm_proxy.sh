#!/usr/bin/env bash
# The proxy judged on LLM traffic (issue 27, item 5): curlretry-proxy (default config, one route to
# the upstream), HAProxy and nginx (the same hop, configured as bench/run.sh does), against one
# local upstream (bench/llm_load.c `serve`) and against the upstream directly, in one run:
#
#   - added time to first byte of a non-streamed request (600-byte JSON answer), p50/p99, and the
#     proxies' CPU per request (schedstat of every thread of their processes) sequentially and at
#     64 at once, with libcurl's floor beside it (the plain libcurl client's own CPU per request
#     against the upstream directly: bench/README.md, "The floor libcurl sets");
#   - added latency per SSE event, p50/p99, with 1, 100 and 1,000 concurrent streams, events
#     20-50 ms apart (bench/llm_load.c `streams`: the upstream stamps each event with
#     CLOCK_MONOTONIC at its write, the client reads the same clock at its read);
#   - RSS per idle stream (growth of the proxy's processes from 0 to 1,000 open idle streams)
#     and the most concurrent idle streams held, up to 10,000 (`ulimit -n` raised to the hard
#     limit), with the reason a proxy stopped.
#
#   bench/llm_proxy.sh [--quick] [--reps N] [--target N] [--hold-body BYTES] [--lib PATH] [--proxy PATH] [--keep]
#
#   --quick      fewer requests and events, one repetition (under 2 minutes; full: ~5-8)
#   --reps N     interleaved repetitions of the latency and CPU rows (default 3, --quick 1)
#   --target N   streams to try to hold at once (default 10000)
#   --hold-body BYTES  the idle streams are POSTs with a JSON body that long (an agent's request:
#                its conversation and tools), not GETs (default 0: GETs)
#   --lib PATH   the shim (default $CURLRETRY_LIB, else build/shim/libcurlretry.so)
#   --proxy PATH curlretry-proxy (default $CURLRETRY_PROXY, else build/proxy/curlretry-proxy)
#   --keep       keep the work directory (configs, logs, raw results)
#
# Every server binds 127.0.0.1 on a free port; servers are pinned to CPUs 1.., clients to CPU 0
# (as bench/run.sh); everything started here is stopped on exit.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/bench"
. "$here/proxies.sh"

quick=0
reps=""
target=10000
hold_body=0
keep=0
lib=${CURLRETRY_LIB:-$root/build/shim/libcurlretry.so}
crproxy=${CURLRETRY_PROXY:-$root/build/proxy/curlretry-proxy}
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --reps) reps=$2; shift ;;
    --target) target=$2; shift ;;
    --hold-body) hold_body=$2; shift ;;
    --lib) lib=$2; shift ;;
    --proxy) crproxy=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/llm_proxy.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
case "${reps:-1}$target$hold_body" in *[!0-9]*) echo "bench/llm_proxy.sh: --reps, --target and --hold-body want numbers" >&2; exit 2 ;; esac
if [ "$quick" = 1 ]; then
  reps=${reps:-1}; n_ttfb=1000; n_multi=4000; ev1=40; ev100=30; ev1000=20
else
  reps=${reps:-3}; n_ttfb=3000; n_multi=12000; ev1=150; ev100=80; ev1000=40
fi
gap_min=20
gap_max=50

"$here/install-deps.sh"
[ -f "$lib" ] || { echo "bench/llm_proxy.sh: no shim at $lib (build curlretry_shim, or pass --lib)" >&2; exit 1; }
[ -x "$crproxy" ] || { echo "bench/llm_proxy.sh: no curlretry-proxy at $crproxy (pass --proxy)" >&2; exit 1; }
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")

# Every proxied stream takes two descriptors in the proxy (client and upstream side), and the
# client holds one per stream: raise the soft limit to the hard one, and say what it is.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fd_limit=$(ulimit -n)

pin_client=()
pin_server=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  pin_client=(taskset -c 0)
  pin_server=(taskset -c "1-$(( $(nproc) - 1 ))")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/curlretry-llm.XXXXXX")
chmod 755 "$work"
pids=()
cleanup() {
  local status=$? pid
  exec 9>&-
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then echo "bench/llm_proxy.sh: work directory kept: $work" >&2; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/logs" "$work/home" "$work/xdg" "$work/nginx" "$work/haproxy"
cc -O2 -Wall -Wextra -o "$work/llm_load" "$here/llm_load.c"
cc -O2 -Wall -Wextra -o "$work/loadgen" "$here/loadgen.c" -lcurl
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started_at=$(date +%s)

# The upstream: exits when the lifeline (fd 9, held by this script) closes.
mkfifo "$work/lifeline"
"${pin_server[@]}" "$work/llm_load" serve "$work/upstream.port" <"$work/lifeline" 2>"$work/logs/upstream.err" &
pids+=($!)
exec 9>"$work/lifeline"
for _ in $(seq 1 100); do [ -s "$work/upstream.port" ] && break; sleep 0.05; done
[ -s "$work/upstream.port" ] || { echo "bench/llm_proxy.sh: the upstream did not start" >&2; exit 1; }
p_up=$(cat "$work/upstream.port")
read -r p_haproxy p_nginx p_crproxy < <("$work/loadgen" freeport 3)

# HAProxy and nginx as bench/run.sh configures them (bench/proxies.sh), with the connection limits
# raised so that the descriptor limit, not a default, is what stops them: HAProxy's maxconn
# (run.sh: 4096) and nginx's worker_connections (run.sh: 4096). nginx gets `proxy_buffering off`,
# which an event stream needs (nginx otherwise holds events until its buffer fills).
# HAProxy refuses to start when maxconn needs more descriptors than the limit (two per
# connection plus a few of its own: "Cannot raise FD limit to 20014, limit is 20000").
haproxy_maxconn=$(( (fd_limit - 20) / 2 ))
[ "$haproxy_maxconn" -le "$target" ] || haproxy_maxconn=$target
haproxy_retrying_cfg "$haproxy_maxconn" "up:$p_haproxy:$p_up" >"$work/haproxy/haproxy.cfg"
nginx_retrying_conf "$work/nginx" "$work/logs/nginx.err" "$fd_limit" "proxy_buffering off; proxy_read_timeout 120s;" \
  "backend:$p_nginx:$p_up:twice" >"$work/nginx/nginx.conf"
# curlretry-proxy with the default config: one route, nothing else.
printf 'version: 1\nproxy:\n  routes:\n    u: {upstream: "http://127.0.0.1:%s"}\n' "$p_up" >"$work/crproxy.yaml"

haproxy -c -q -f "$work/haproxy/haproxy.cfg" 2>"$work/logs/haproxy-check.err" || { cat "$work/logs/haproxy-check.err" >&2; exit 1; }
nginx -t -q -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/logs/nginx.err"
"${pin_server[@]}" haproxy -db -f "$work/haproxy/haproxy.cfg" </dev/null >"$work/logs/haproxy.out" 2>"$work/logs/haproxy.err" 9>&- &
pids+=($!); pid_haproxy=$!
"${pin_server[@]}" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/logs/nginx.err" </dev/null 9>&- &
pids+=($!); pid_nginx=$!
"${pin_server[@]}" env -i PATH="$PATH" HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" CURLRETRY_LIBRARY="$lib" \
  CURLRETRY_FLEET_DIR="$work/fleet" "$crproxy" --listen "127.0.0.1:$p_crproxy" --config "$work/crproxy.yaml" \
  </dev/null >"$work/logs/crproxy.out" 2>"$work/logs/crproxy.err" 9>&- &
pids+=($!); pid_crproxy=$!
for p in "$p_haproxy" "$p_nginx" "$p_crproxy"; do
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; sleep 0.05; done
  (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null ||
    { echo "bench/llm_proxy.sh: nothing listens on 127.0.0.1:$p" >&2; cat "$work"/logs/*.err >&2; exit 1; }
done

port_of() { case "$1" in direct) echo "$p_up" ;; haproxy) echo "$p_haproxy" ;; nginx) echo "$p_nginx" ;; proxy) echo "$p_crproxy" ;; esac; }
prefix_of() { case "$1" in proxy) echo /u ;; *) echo "" ;; esac; }
pid_of() { case "$1" in haproxy) echo "$pid_haproxy" ;; nginx) echo "$pid_nginx" ;; proxy) echo "$pid_crproxy" ;; *) echo "" ;; esac; }
processes() { echo "$1"; cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | sed '/^$/d' || true; }
cpu_ns() {  # on-CPU ns of every thread of the process and its children (nginx workers)
  local total=0 p t ns rest
  for p in $(processes "$1"); do
    for t in /proc/"$p"/task/*/schedstat; do read -r ns rest <"$t" 2>/dev/null || continue; total=$((total + ns)); done
  done
  echo "$total"
}
results="$work/results.tsv"
: >"$results"
clean=(env -i PATH="$PATH" HOME="$work/home" XDG_CONFIG_HOME="$work/xdg")
rotate() { local n=$1; shift; local w=("$@") i; for ((i = 0; i < ${#w[@]}; i++)); do printf '%s ' "${w[(i + n) % ${#w[@]}]}"; done; }

# Checks: every path answers before anything is measured.
for v in direct haproxy nginx proxy; do
  line=$("${clean[@]}" timeout 60 "$work/llm_load" streams "$(port_of $v)" "$(prefix_of $v)/stream/3/1/2" 2)
  case "$line" in *"streams_ok=2 "*"events=6 "*) ;; *) echo "bench/llm_proxy.sh: check $v stream: $line" >&2; exit 1 ;; esac
  line=$("${clean[@]}" timeout 60 "$work/loadgen" easy -u "http://127.0.0.1:$(port_of $v)$(prefix_of $v)/complete" -n 5 -w 0)
  case "$line" in *" ok=5 "*"bytes=3000 "*) ;; *) echo "bench/llm_proxy.sh: check $v complete: $line" >&2; exit 1 ;; esac
done

# The proxy's engine must be the shim with its policy, not a pass-through (a shim whose YAML
# reader or config did not load says so on the proxy's stderr and retries nothing).
if grep -q 'pass-through' "$work/logs/crproxy.err"; then
  echo "bench/llm_proxy.sh: curlretry-proxy runs without its retry policy:" >&2
  cat "$work/logs/crproxy.err" >&2
  exit 1
fi

# 1. Idle streams, first, on proxies that have carried only the checks (memory an allocator
# keeps from earlier rows would hide the growth): RSS from 0 to 1,000 idle streams, then on
# to $target, 500 at a time, until a batch fails.
upstream_conns() { ss -Htn state established "( sport = :$p_up )" 2>/dev/null | wc -l; }
for v in haproxy nginx proxy; do
  echo "bench/llm_proxy.sh: holding up to $target idle streams through $v ($(( $(date +%s) - started_at )) s)" >&2
  list=$(processes "$(pid_of $v)" | paste -sd,)
  line=$("${pin_client[@]}" "${clean[@]}" timeout 400 "$work/llm_load" hold "$(port_of $v)" "$(prefix_of $v)/hold" \
    "$target" 500 "$list" "$hold_body" 2>>"$work/logs/hold.err") || line="held=0 first_error=client_failed"
  why=""
  case $v in
    proxy) why=$(grep -v '^$' "$work/logs/crproxy.err" | tail -1 | tr ' =\t' '___' | cut -c1-150 || true) ;;
    haproxy) why=$(grep -iv '^$' "$work/logs/haproxy.err" | tail -1 | tr ' =\t' '___' | cut -c1-150 || true) ;;
    nginx) why=$(grep -iv '^$' "$work/logs/nginx.err" | tail -1 | tr ' =\t' '___' | cut -c1-150 || true) ;;
  esac
  printf 'hold\t%s\t0\t%s log_last=%s\n' "$v" "$line" "${why:-none}" >>"$results"
  # The next proxy starts from an upstream that has let go of these (bounded: 10 s; the
  # proxies' pools of idle upstream connections stay, up to a few hundred).
  for _ in $(seq 1 100); do [ "$(upstream_conns)" -lt 400 ] && break; sleep 0.1; done
done

# 2. Non-streamed requests: time to first byte (the whole 600-byte answer arrives in one read,
# so loadgen's per-request time is it) and the proxy's CPU per request, sequential and 64 at once.
run_loadgen() {  # ROW VARIANT REP LOADGEN-ARGS...
  local row=$1 v=$2 rep=$3 pid before=0 after line
  shift 3
  pid=$(pid_of "$v")
  [ -n "$pid" ] && before=$(cpu_ns "$pid")
  line=$("${pin_client[@]}" "${clean[@]}" timeout 300 "$work/loadgen" "$@" 2>>"$work/logs/loadgen.err") || true
  if [ -n "$pid" ]; then after=$(cpu_ns "$pid"); line="$line proxy_cpu_ns=$((after - before))"; fi
  printf '%s\t%s\t%s\t%s\n' "$row" "$v" "$rep" "$line" >>"$results"
}
for ((rep = 1; rep <= reps; rep++)); do
  echo "bench/llm_proxy.sh: requests, repetition $rep/$reps ($(( $(date +%s) - started_at )) s)" >&2
  for v in $(rotate "$rep" direct haproxy nginx proxy); do
    url="http://127.0.0.1:$(port_of $v)$(prefix_of $v)/complete"
    run_loadgen ttfb "$v" "$rep" easy -u "$url" -n "$n_ttfb" -w 200
    run_loadgen multi "$v" "$rep" multi -u "$url" -n "$n_multi" -c 64 -w 500
  done
done

# 3. Event streams: 1, 100 and 1,000 at once, events 20-50 ms apart.
for ((rep = 1; rep <= reps; rep++)); do
  for c in 1 100 1000; do
    case $c in 1) ev=$ev1 ;; 100) ev=$ev100 ;; 1000) ev=$ev1000 ;; esac
    echo "bench/llm_proxy.sh: $c streams x $ev events, repetition $rep/$reps ($(( $(date +%s) - started_at )) s)" >&2
    for v in $(rotate "$rep" direct haproxy nginx proxy); do
      pid=$(pid_of "$v")
      before=0
      [ -n "$pid" ] && before=$(cpu_ns "$pid")
      line=$("${pin_client[@]}" "${clean[@]}" timeout 200 "$work/llm_load" streams "$(port_of $v)" \
        "$(prefix_of $v)/stream/$ev/$gap_min/$gap_max" "$c" 2>>"$work/logs/streams.err") || line="failed=$c"
      [ -n "$pid" ] && line="$line proxy_cpu_ns=$(( $(cpu_ns "$pid") - before ))"
      printf 'sse%s\t%s\t%s\t%s\n' "$c" "$v" "$rep" "$line" >>"$results"
    done
  done
done

load_end=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "proxy=$crproxy"
  echo "versions=libcurl $(curl-config --version 2>/dev/null | sed 's/^libcurl //'), nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'), HAProxy $(haproxy -v 2>&1 | head -1 | awk '{print $3}')"
  echo "load_start=$load_start"
  echo "load_end=$load_end"
  echo "fd_limit=$fd_limit haproxy_maxconn=$haproxy_maxconn"
  echo "nproc=$(nproc)"
  echo "reps=$reps quick=$quick n_ttfb=$n_ttfb n_multi=$n_multi ev1=$ev1 ev100=$ev100 ev1000=$ev1000 gap=$gap_min-$gap_max target=$target hold_body=$hold_body"
  echo "elapsed_s=$(( $(date +%s) - started_at ))"
} >"$work/meta.txt"
[ "$keep" = 1 ] && cp "$results" "$work/meta.txt" "$work/logs/" 2>/dev/null || true
python3 "$here/llm_report.py" "$work/meta.txt" "$results"
