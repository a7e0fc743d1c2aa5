#!/usr/bin/env bash
# curlretry benchmarks: plain libcurl (direct) against libcurl under LD_PRELOAD=libcurlretry.so
# (preload), against the two local retrying proxies a user would put in front instead (HAProxy
# with retry-on, nginx with proxy_next_upstream) and against curlretry's own proxy
# (curlretry-proxy, issue 15). Everything runs interleaved in one go and ends with a table of
# medians and ratios and a verdict per target (bench/README.md).
#
#   bench/run.sh [--quick] [--runs N] [--only ROWS] [--lib PATH] [--upstream PATH] [--proxy PATH]
#                [--client-cpu N | --no-pin] [--keep]
#
#   --quick          smaller request counts and 5 runs (under 2 minutes)
#   --runs N         runs per row (default 11, --quick 5); the table shows medians
#   --only ROWS      a comma list of rows: easy,multi,bulk,retry-easy,retry-multi,idle,rss,start,instr
#   --lib PATH       the shim (default $CURLRETRY_LIB, else build/shim/libcurlretry.so)
#   --upstream PATH  flaky-upstream (default $FLAKY_UPSTREAM, else build/upstream/flaky-upstream)
#   --proxy PATH     curlretry-proxy (default $CURLRETRY_PROXY, else build/proxy/curlretry-proxy)
#   --client-cpu N   pin the load generator to CPU N (default 0; the servers always get CPUs 1..)
#   --no-pin         do not pin the load generator to CPU 0 and the servers to the other CPUs
#   --keep           keep the work directory (configs, logs, raw results) and say where it is
#
# Servers bind 127.0.0.1 only, on ports free at start; every process started here is stopped
# on exit. The raw results are one key=value line per run in $work/results.tsv.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"  # nginx and haproxy live in sbin

root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/bench"
. "$here/proxies.sh"

quick=0
runs=""
only=""
keep=0
pin=1
client_cpu=0
lib=${CURLRETRY_LIB:-$root/build/shim/libcurlretry.so}
flaky=${FLAKY_UPSTREAM:-$root/build/upstream/flaky-upstream}
crproxy=${CURLRETRY_PROXY:-$root/build/proxy/curlretry-proxy}
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --runs) runs=$2; shift ;;
    --only) only=$2; shift ;;
    --lib) lib=$2; shift ;;
    --upstream) flaky=$2; shift ;;
    --proxy) crproxy=$2; shift ;;
    --keep) keep=1 ;;
    --no-pin) pin=0 ;;
    --client-cpu) client_cpu=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

# Request counts. Bulk always moves a 256 MiB body; rss is always 10,000 requests.
if [ "$quick" = 1 ]; then
  runs=${runs:-5}
  n_easy=1500; n_multi=4000; n_bulk=1; n_retry_easy=800; n_retry_multi=2000
  n_start_true=100; n_start_curl=20
  instr_easy="100 600"; instr_multi=""  # --quick counts easy and start only
else
  runs=${runs:-11}
  n_easy=15000; n_multi=20000; n_bulk=1; n_retry_easy=2500; n_retry_multi=6000
  n_start_true=300; n_start_curl=60
  instr_easy="200 2200"; instr_multi="500 4500"
fi
n_rss=10000
n_idle=1000      # open streams per proxy in the idle row
idle_hang_ms=60000
concurrency=64
bulk_bytes=$((256 * 1024 * 1024))
case "$runs" in ''|*[!0-9]*) echo "bench/run.sh: --runs wants a number" >&2; exit 2 ;; esac
[ "$runs" -ge 1 ] || { echo "bench/run.sh: --runs wants at least 1" >&2; exit 2; }

all_rows="easy multi bulk retry-easy retry-multi idle rss start instr"
rows=${only//,/ }
rows=${rows:-$all_rows}
for r in $rows; do
  case " $all_rows " in *" $r "*) ;; *) echo "bench/run.sh: unknown row '$r' (rows: $all_rows)" >&2; exit 2 ;; esac
done
wants() { case " $rows " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# CPU placement: the load generator alone on CPU 0, every server on the others. Otherwise the
# scheduler moves the client and the servers across the cores from run to run, and the same
# row swings by ±20 % (measured on the 2-core machine of bench/README.md). --client-cpu 1 puts
# the client on the servers' core instead (see bench/README.md on the retry path).
pin_client=()
pin_server=()
cpus=$(nproc)
case "$client_cpu" in ''|*[!0-9]*) echo "bench/run.sh: --client-cpu wants a CPU number" >&2; exit 2 ;; esac
[ "$client_cpu" -lt "$cpus" ] || { echo "bench/run.sh: --client-cpu $client_cpu: this machine has CPUs 0-$((cpus - 1))" >&2; exit 2; }
if [ "$pin" = 1 ] && [ "$cpus" -ge 2 ] && command -v taskset >/dev/null; then
  pin_client=(taskset -c "$client_cpu")
  pin_server=(taskset -c "1-$((cpus - 1))")
fi

# ----------------------------------------------------------------------------------------------
# Dependencies and binaries

"$here/install-deps.sh"
if [ ! -f "$lib" ] || [ ! -x "$flaky" ] || [ ! -x "$crproxy" ]; then
  if [ -z "${CURLRETRY_LIB:-}" ] && [ -z "${FLAKY_UPSTREAM:-}" ] && [ -z "${CURLRETRY_PROXY:-}" ]; then
    echo "bench/run.sh: building curlretry_shim, curlretry-proxy and flaky-upstream in $root/build" >&2
    cmake -S "$root" -B "$root/build" >/dev/null
    cmake --build "$root/build" -j"$(nproc)" --target curlretry_shim curlretry-proxy flaky-upstream >/dev/null
  fi
fi
[ -f "$lib" ] || { echo "bench/run.sh: no shim at $lib (build target curlretry_shim, or pass --lib)" >&2; exit 1; }
[ -x "$flaky" ] || { echo "bench/run.sh: no flaky-upstream at $flaky (pass --upstream)" >&2; exit 1; }
[ -x "$crproxy" ] ||
  { echo "bench/run.sh: no curlretry-proxy at $crproxy (build curlretry-proxy, or pass --proxy)" >&2; exit 1; }
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
if [ -e /etc/curlretry/config.yaml ]; then
  echo "bench/run.sh: note: /etc/curlretry/config.yaml exists and applies to the preload rows" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/curlretry-bench.XXXXXX")
chmod 755 "$work"  # nginx workers may run as nobody and must read the bulk file
pids=()
cleanup() {
  local status=$?
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    # Bounded wait for each child we started, then the hard way.
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then
    echo "bench/run.sh: work directory kept: $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

loadgen="$work/loadgen"
cc -O2 -Wall -Wextra -o "$loadgen" "$here/loadgen.c" -lcurl
mkdir -p "$work/logs" "$work/home" "$work/xdg"

# ----------------------------------------------------------------------------------------------
# Servers: the flaky upstream, nginx as the upstream, HAProxy and nginx as retrying proxies

read -r p_nginx p_nginx_proxy p_nginx_proxy_flaky p_haproxy p_haproxy_flaky p_crproxy < <("$loadgen" freeport 6)

# flaky-upstream exits when its stdin (this fifo, held open by us on fd 9) reaches EOF: it
# cannot outlive the script even if the script is killed.
mkfifo "$work/lifeline"
"${pin_server[@]}" "$flaky" --port-file "$work/flaky.port" <"$work/lifeline" >"$work/logs/flaky.out" 2>"$work/logs/flaky.err" &
pids+=($!)
exec 9>"$work/lifeline"

mkdir -p "$work/www" "$work/nginx" "$work/nginx-proxy" "$work/haproxy" "$work/crproxy"
head -c "$bulk_bytes" /dev/zero >"$work/www/big.bin"
chmod 644 "$work/www/big.bin"

for _ in $(seq 1 100); do [ -s "$work/flaky.port" ] && break; sleep 0.05; done
[ -s "$work/flaky.port" ] || { echo "bench/run.sh: flaky-upstream did not start" >&2; cat "$work/logs/flaky.err" >&2; exit 1; }
p_flaky=$(cat "$work/flaky.port")

# The upstream: a fixture, the same for every variant. One worker leaves the other core to the
# client. Debian's nginx defaults otherwise, with access logging off and keep-alive unbounded.
cat >"$work/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/logs/nginx.err warn;
events { worker_connections 4096; }
http {
$(nginx_temp_paths "$work/nginx")
  access_log off;
  default_type text/plain;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$p_nginx;
    root $work/www;
    location = /ok { return 200 "ok\n"; }
  }
}
EOF

# nginx and HAProxy as retrying reverse proxies, as their documentation leads a user to configure
# them (bench/proxies.sh): nginx to the upstream nginx and (listed twice) the flaky upstream.
nginx_retrying_conf "$work/nginx-proxy" "$work/logs/nginx-proxy.err" 4096 "" \
  "backend:$p_nginx_proxy:$p_nginx" "flaky:$p_nginx_proxy_flaky:$p_flaky:twice" >"$work/nginx-proxy/nginx.conf"
haproxy_retrying_cfg 4096 "nginx:$p_haproxy:$p_nginx" "flaky:$p_haproxy_flaky:$p_flaky" >"$work/haproxy/haproxy.cfg"

# curlretry's own proxy (issue 15): one reverse route to each upstream, built-in retry policy.
# Like the preload on the retry rows: no backoff delay (CURLRETRY_BASE_MS=0) and no fleet budget;
# default logging (its lines about retries go to a log file). It preloads libcurlretry.so into
# itself, found through CURLRETRY_LIBRARY.
cat >"$work/crproxy/config.yaml" <<EOF
version: 1
proxy:
  routes:
    n: {upstream: "http://127.0.0.1:$p_nginx"}
    f: {upstream: "http://127.0.0.1:$p_flaky"}
EOF

nginx -t -q -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/logs/nginx.err"
nginx -t -q -p "$work/nginx-proxy" -c "$work/nginx-proxy/nginx.conf" -e "$work/logs/nginx-proxy.err"
haproxy -c -q -f "$work/haproxy/haproxy.cfg"
# (9>&-: the long-lived servers must not hold the flaky upstream's lifeline open.)
"${pin_server[@]}" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/logs/nginx.err" </dev/null 9>&- &
pids+=($!)
"${pin_server[@]}" nginx -p "$work/nginx-proxy" -c "$work/nginx-proxy/nginx.conf" -e "$work/logs/nginx-proxy.err" </dev/null 9>&- &
pids+=($!)
pid_nginx_proxy=$!
"${pin_server[@]}" haproxy -db -f "$work/haproxy/haproxy.cfg" </dev/null >"$work/logs/haproxy.out" 2>"$work/logs/haproxy.err" 9>&- &
pids+=($!)
pid_haproxy=$!
"${pin_server[@]}" env -u LD_PRELOAD -u CURLRETRY_CONFIG HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" \
  CURLRETRY_LIBRARY="$lib" CURLRETRY_BASE_MS=0 CURLRETRY_FLEET_DIR="$work/fleet" \
  "$crproxy" --listen "127.0.0.1:$p_crproxy" --config "$work/crproxy/config.yaml" \
  </dev/null >"$work/logs/crproxy.out" 2>"$work/logs/crproxy.err" 9>&- &
pids+=($!)
pid_crproxy=$!

wait_port() {
  local port=$1
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "bench/run.sh: nothing listens on 127.0.0.1:$port" >&2
  cat "$work"/logs/*.err >&2
  exit 1
}
for p in "$p_nginx" "$p_nginx_proxy" "$p_nginx_proxy_flaky" "$p_haproxy" "$p_haproxy_flaky" "$p_crproxy"; do
  wait_port "$p"
done

# ----------------------------------------------------------------------------------------------
# Variants

url_direct="http://127.0.0.1:$p_nginx"
url_haproxy="http://127.0.0.1:$p_haproxy"
url_nginx="http://127.0.0.1:$p_nginx_proxy"
flaky_direct="http://127.0.0.1:$p_flaky"
flaky_haproxy="http://127.0.0.1:$p_haproxy_flaky"
flaky_nginx="http://127.0.0.1:$p_nginx_proxy_flaky"
url_crproxy="http://127.0.0.1:$p_crproxy/n"
flaky_crproxy="http://127.0.0.1:$p_crproxy/f"

# The proxies' own cost, measured the same way for all three: the on-CPU time of every thread of
# the proxy's processes (nginx: the master and its workers), from /proc/PID/task/TID/schedstat
# (nanoseconds), before and after a run. Threads that exit during a run would be missed; none of
# the three starts threads per request here (the upstreams are IP literals: no resolver thread).
proxy_pid() {
  case "$1" in haproxy) echo "$pid_haproxy" ;; nginx) echo "$pid_nginx_proxy" ;; proxy) echo "$pid_crproxy" ;; esac
}
proxy_processes() {  # the pid and its child processes
  local pid=$1
  echo "$pid"
  cat /proc/"$pid"/task/*/children 2>/dev/null || true
}
proxy_cpu_ns() {
  local total=0 p t ns rest
  for p in $(proxy_processes "$1"); do
    for t in /proc/"$p"/task/*/schedstat; do
      read -r ns rest <"$t" 2>/dev/null || continue
      total=$((total + ns))
    done
  done
  echo "$total"
}
proxy_rss_kib() {
  local total=0 p kib
  for p in $(proxy_processes "$1"); do
    kib=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null || echo 0)
    total=$((total + ${kib:-0}))
  done
  echo "$total"
}

# The load generator runs with a clean curlretry environment: no CURLRETRY_*/BILI_REPLAY_*
# from the caller, no user config file (HOME and XDG_CONFIG_HOME point into the work dir).
clean_env=(env -u LD_PRELOAD -u CURLRETRY_DISABLE -u CURLRETRY_MAX_ATTEMPTS -u CURLRETRY_BASE_MS
           -u CURLRETRY_MAX_DELAY_MS -u CURLRETRY_LOG -u CURLRETRY_LOG_FILE -u CURLRETRY_CONFIG
           -u BILI_REPLAY_RETRY_MAX -u BILI_REPLAY_RETRY_BASE_MS -u CURLRETRY_FLEET -u CURLRETRY_EVENTS
           HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" CURLRETRY_FLEET_DIR="$work/fleet")

results="$work/results.tsv"
: >"$results"

# run_one ROW VARIANT RUN [ENV=VALUE...] -- LOADGEN-ARGS...
run_one() {
  local row=$1 variant=$2 run=$3
  shift 3
  local extra=()
  while [ "$1" != "--" ]; do extra+=("$1"); shift; done
  shift
  local err="$work/logs/$row-$variant-$run.err" line pid="" before=0 after
  pid=$(proxy_pid "$variant")
  [ -n "$pid" ] && before=$(proxy_cpu_ns "$pid")
  if ! line=$(timeout 300 "${pin_client[@]}" "${clean_env[@]}" "${extra[@]}" "$loadgen" "$@" 2>"$err"); then
    echo "bench/run.sh: $row/$variant run $run failed: $line" >&2
    tail -5 "$err" >&2
  fi
  # The proxy's CPU time over the whole loadgen run, warm-up requests included (run_variant sets
  # $warm_up; report.py divides by requests + warm-up, or by MiB for bulk).
  if [ -n "$pid" ] && [ -n "$line" ]; then
    after=$(proxy_cpu_ns "$pid")
    line="$line proxy_cpu_ns=$((after - before)) warm_up=${warm_up:-0}"
  fi
  [ -n "$line" ] && printf '%s\t%s\t%s\t%s\n' "$row" "$variant" "$run" "$line" >>"$results"
  return 0
}

preload=(LD_PRELOAD="$lib")
# The retry rows measure what one retry costs, as HAProxy's retry-on does for every request, with
# the default fleet (its budget paces retries; a retry that succeeds gives its token back).
retry_env=(LD_PRELOAD="$lib" CURLRETRY_BASE_MS=0)

# One variant of one row. Keys of the retry rows are unique per row, variant and run, so every
# request's first attempt is a 503 and its second a 200 (flaky-upstream keeps a counter per key).
run_variant() {
  local row=$1 variant=$2 run=$3
  local url env=()
  case "$variant" in preload) env=("${preload[@]}") ;; esac
  case "$row" in
    easy|multi|bulk|rss)
      case "$variant" in
        direct|preload) url=$url_direct ;; haproxy) url=$url_haproxy ;; nginx) url=$url_nginx ;;
        proxy) url=$url_crproxy ;;
      esac ;;
    retry-*)
      case "$variant" in
        direct|preload) url=$flaky_direct ;; haproxy) url=$flaky_haproxy ;; nginx) url=$flaky_nginx ;;
        proxy) url=$flaky_crproxy ;;
      esac
      [ "$variant" = preload ] && env=("${retry_env[@]}")
      url="$url/s/${row#retry-}-$variant-r$run-{i}/503,200" ;;
  esac
  case "$row" in
    easy) warm_up=200 ;; multi) warm_up=500 ;; retry-easy) warm_up=50 ;; retry-multi) warm_up=200 ;; *) warm_up=0 ;;
  esac
  case "$row" in
    easy) run_one "$row" "$variant" "$run" "${env[@]}" -- easy -u "$url/ok" -n "$n_easy" -w 200 ;;
    multi) run_one "$row" "$variant" "$run" "${env[@]}" -- multi -u "$url/ok" -n "$n_multi" -c "$concurrency" -w 500 ;;
    bulk) run_one "$row" "$variant" "$run" "${env[@]}" -- bulk -u "$url/big.bin" -n "$n_bulk" -w 0 ;;
    retry-easy) run_one "$row" "$variant" "$run" "${env[@]}" -- easy -u "$url" -n "$n_retry_easy" -w 50 ;;
    retry-multi) run_one "$row" "$variant" "$run" "${env[@]}" -- multi -u "$url" -n "$n_retry_multi" -c "$concurrency" -w 200 ;;
    rss) run_one "$row" "$variant" "$run" "${env[@]}" -- multi -u "$url/ok" -n "$n_rss" -c "$concurrency" -w 0 --fresh ;;
  esac
}

# idle_streams VARIANT RUN: the proxy's RSS growth with $n_idle streams open at once through it to
# an upstream that answers nothing for $idle_hang_ms (flaky-upstream `hang`). All streams share
# one key, so the upstream's counter says when every one of them has arrived; then the RSS of the
# proxy's processes is read and the client is stopped. It runs once, first, on proxies that have
# served nothing yet: memory a proxy's allocator already holds from earlier rows (freed, not given
# back) would otherwise hide most of the growth.
idle_streams() {
  local v=$1 run=$2 base key before after arrived=0 client i
  case "$v" in haproxy) base=$flaky_haproxy ;; nginx) base=$flaky_nginx ;; proxy) base=$flaky_crproxy ;; esac
  key="idle-$v-r$run"
  before=$(proxy_rss_kib "$(proxy_pid "$v")")
  "${pin_client[@]}" "${clean_env[@]}" "$loadgen" multi -u "$base/s/$key/hang$idle_hang_ms" -n "$n_idle" \
    -c "$n_idle" -w 0 -t 120 >/dev/null 2>"$work/logs/idle-$v-$run.err" &
  client=$!
  for i in $(seq 1 600); do  # at most 60 s
    arrived=$(curl -sS --max-time 5 "$flaky_direct/count/$key" 2>/dev/null || echo 0)
    [ "${arrived:-0}" -ge "$n_idle" ] && break
    sleep 0.1
  done
  after=$(proxy_rss_kib "$(proxy_pid "$v")")
  kill -TERM "$client" 2>/dev/null || true
  wait "$client" 2>/dev/null || true
  if [ "${arrived:-0}" -ge "$n_idle" ]; then
    printf '%s\t%s\t%s\tstreams=%s rss_before_kib=%s rss_after_kib=%s kib_per_1000=%s\n' idle "$v" "$run" \
      "$arrived" "$before" "$after" "$(( (after - before) * 1000 / arrived ))" >>"$results"
  else
    echo "bench/run.sh: idle/$v run $run: only ${arrived:-0} of $n_idle streams reached the upstream" >&2
  fi
  # Let the proxy see the hang-ups before the next variant measures its baseline (bounded).
  for i in $(seq 1 100); do
    [ "$(ss -Htn state established "( dport = :$p_flaky )" 2>/dev/null | wc -l)" -lt 200 ] && break
    sleep 0.1
  done
}

if wants idle; then
  echo "bench/run.sh: idle streams, $n_idle per proxy" >&2
  for v in haproxy nginx proxy; do idle_streams "$v" 1; done
fi

# Checks that every path answers as it should before anything is timed.
check() {
  local what=$1 want=$2
  shift 2
  local line
  line=$(timeout 60 "${clean_env[@]}" "$@" 2>>"$work/logs/checks.err") || true
  case "$line" in
    *"$want"*) ;;
    *) echo "bench/run.sh: check failed: $what: want '$want', got '$line'" >&2; cat "$work/logs/checks.err" >&2; exit 1 ;;
  esac
}
check "nginx /ok" "ok=20 " "$loadgen" easy -u "$url_direct/ok" -n 20 -w 0
check "nginx bulk" "bytes=$bulk_bytes " "$loadgen" bulk -u "$url_direct/big.bin" -w 0
check "haproxy /ok" "ok=20 " "$loadgen" easy -u "$url_haproxy/ok" -n 20 -w 0
check "nginx-proxy /ok" "ok=20 " "$loadgen" easy -u "$url_nginx/ok" -n 20 -w 0
check "preload /ok" "ok=20 " "${preload[@]}" "$loadgen" easy -u "$url_direct/ok" -n 20 -w 0
check "flaky direct 503" "ok=0 " "$loadgen" easy -u "$flaky_direct/s/check-direct-{i}/503,200" -n 20 -w 0
check "flaky preload retry" "ok=20 " "${retry_env[@]}" "$loadgen" easy -u "$flaky_direct/s/check-preload-{i}/503,200" -n 20 -w 0
check "haproxy retry-on" "ok=20 " "$loadgen" easy -u "$flaky_haproxy/s/check-haproxy-{i}/503,200" -n 20 -w 0
check "nginx proxy_next_upstream" "ok=20 " "$loadgen" easy -u "$flaky_nginx/s/check-nginx-{i}/503,200" -n 20 -w 0
check "curlretry-proxy /ok" "ok=20 " "$loadgen" easy -u "$url_crproxy/ok" -n 20 -w 0
check "curlretry-proxy bulk" "bytes=$bulk_bytes " "$loadgen" bulk -u "$url_crproxy/big.bin" -w 0
check "curlretry-proxy retry" "ok=20 " "$loadgen" easy -u "$flaky_crproxy/s/check-crproxy-{i}/503,200" -n 20 -w 0

# ----------------------------------------------------------------------------------------------
# The runs: for each run, each row, every variant, the variants' order rotating from run to run

libcurl_version=$(curl-config --version 2>/dev/null | sed 's/^libcurl //')
{
  echo "date=$(date '+%Y-%m-%d %H:%M:%S %z')"
  echo "nproc=$(nproc)"
  echo "kernel=$(uname -r)"
  echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "libcurl=$libcurl_version"
  echo "nginx=$(nginx -v 2>&1 | sed 's/^nginx version: nginx\///')"
  echo "haproxy=$(haproxy -v 2>&1 | head -1 | awk '{print $3}')"
  echo "crproxy=$crproxy"
  echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "shim=$lib"
  echo "shim_built=$(date -r "$lib" '+%Y-%m-%d %H:%M:%S')"
  echo "shim_needed=$(objdump -p "$lib" 2>/dev/null | awk '/NEEDED/ {printf "%s%s", sep, $2; sep=" "}')"
  echo "commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD -- shim core config 2>/dev/null || echo '+dirty')"
  echo "runs=$runs quick=$quick"
  if [ ${#pin_client[@]} -gt 0 ]; then echo "pinning=client on CPU $client_cpu, servers on CPUs 1-$((cpus - 1))"; else echo "pinning=none"; fi
  echo "n_easy=$n_easy n_multi=$n_multi n_bulk=$n_bulk n_retry_easy=$n_retry_easy n_retry_multi=$n_retry_multi n_rss=$n_rss concurrency=$concurrency"
  echo "n_start_true=$n_start_true n_start_curl=$n_start_curl"
} >"$work/meta.txt"

rotate() {  # rotate N WORDS...: the words, starting from the (N mod count)th
  local n=$1
  shift
  local words=("$@") i
  for ((i = 0; i < ${#words[@]}; i++)); do printf '%s ' "${words[(i + n) % ${#words[@]}]}"; done
}

started_at=$(date +%s)
for ((run = 1; run <= runs; run++)); do
  echo "bench/run.sh: run $run/$runs ($(( $(date +%s) - started_at )) s)" >&2
  for row in $rows; do
    case "$row" in
      start)
        run_one start-true both "$run" -- spawn -n "$n_start_true" -p "$lib" -- /bin/true
        run_one start-curl both "$run" -- spawn -n "$n_start_curl" -p "$lib" -- curl --version ;;
      rss)
        for v in $(rotate "$run" direct preload); do run_variant rss "$v" "$run"; done ;;
      instr) ;;  # once, after the timed runs
      idle) ;;  # once, before the checks
      *)
        for v in $(rotate "$run" direct preload haproxy nginx proxy); do run_variant "$row" "$v" "$run"; done ;;
    esac
  done
done
# ----------------------------------------------------------------------------------------------
# Instruction counts (callgrind): deterministic where wall time on a shared machine is not. Each
# transfer row runs at two request counts; the difference over the extra requests is the cost of
# one request with start-up and warm-up cancelled out. Start rows count one whole process.

# instr_run LABEL VARIANT [ENV=VALUE...] -- COMMAND...: prints the instructions collected
instr_run() {
  local label=$1 variant=$2
  shift 2
  local extra=()
  while [ "$1" != "--" ]; do extra+=("$1"); shift; done
  shift
  local out="$work/callgrind/$label-$variant.out" err="$work/logs/callgrind-$label-$variant.err"
  timeout 300 "${clean_env[@]}" "${extra[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" "$@" \
    >/dev/null 2>"$err" || { echo "bench/run.sh: callgrind $label/$variant failed" >&2; tail -5 "$err" >&2; return 0; }
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$err" | tail -1
}

# instr_transfer ROW N1 N2 LOADGEN-ARGS...: instructions per request for direct and preload
instr_transfer() {
  local row=$1 n1=$2 n2=$3
  shift 3
  local variant env a b
  for variant in direct preload; do
    env=()
    [ "$variant" = preload ] && env=("${preload[@]}")
    a=$(instr_run "$row-$n1" "$variant" "${env[@]}" -- "$loadgen" "$@" -n "$n1")
    b=$(instr_run "$row-$n2" "$variant" "${env[@]}" -- "$loadgen" "$@" -n "$n2")
    if [ -n "$a" ] && [ -n "$b" ]; then
      printf '%s\t%s\t0\tir_per_req=%s ir_%s=%s ir_%s=%s\n' "instr-$row" "$variant" \
        "$(( (b - a) / (n2 - n1) ))" "$n1" "$a" "$n2" "$b" >>"$results"
    fi
  done
}

if wants instr; then
  if command -v valgrind >/dev/null; then
    echo "bench/run.sh: callgrind instruction counts ($(( $(date +%s) - started_at )) s)" >&2
    mkdir -p "$work/callgrind"
    # shellcheck disable=SC2086
    instr_transfer easy ${instr_easy} easy -u "$url_direct/ok" -w 0
    if [ -n "$instr_multi" ]; then
      # shellcheck disable=SC2086
      instr_transfer multi ${instr_multi} multi -u "$url_direct/ok" -c "$concurrency" -w 0
      instr_transfer bulk 1 2 bulk -u "$url_direct/big.bin" -w 0 -t 600
    fi
    for cmd in true curl; do
      for variant in direct preload; do
        env=()
        [ "$variant" = preload ] && env=("${preload[@]}")
        if [ "$cmd" = true ]; then argv=(/bin/true); else argv=(curl --version); fi
        ir=$(instr_run "start-$cmd" "$variant" "${env[@]}" -- "${argv[@]}")
        [ -n "$ir" ] && printf '%s\t%s\t0\tir=%s\n' "instr-start-$cmd" "$variant" "$ir" >>"$results"
      done
    done
  else
    echo "bench/run.sh: valgrind not found: no instruction counts" >&2
  fi
fi

echo "bench/run.sh: done in $(( $(date +%s) - started_at )) s" >&2
echo "elapsed_s=$(( $(date +%s) - started_at ))" >>"$work/meta.txt"

python3 "$here/report.py" "$work/meta.txt" "$results"
