#!/usr/bin/env bash
# curl's own HTTP tests under the preload (issue 18): fetch Debian's source of the system libcurl,
# build the curl tool and curl's test tools, and run the HTTP tests three ways in parallel:
#   plain  without curlretry
#   off    LD_PRELOAD=libcurlretry.so with BILI_REPLAY_RETRY_MAX=1 ("exactly as without curlretry")
#   on     LD_PRELOAD=libcurlretry.so with the default policy
# then print the tests whose outcome differs from the plain run. Fails on any difference with
# retries off, on any difference with retries on that tests/curl-suite/expected-on.txt does not
# list, and on any hang or crash.
#
#   scripts/curl-suite.sh [all|fetch|build|run] [TEST...]   (TEST: curl test numbers or keywords;
#                                                            default: every test with keyword HTTP)
# Environment: CURL_SUITE_DIR (work directory, default build/curl-suite), BUILD_DIR (where
# libcurlretry.so was built, default build/), CURL_SUITE_LIB (the library to preload, default
# $BUILD_DIR/shim/libcurlretry.so), CURL_SUITE_TEST_TIMEOUT (seconds one test command may run
# before it is called a hang and killed, default 60), CURL_SUITE_JOBS (make -j, default 2),
# CURL_SUITE_SHARDS (each of the three runs split into this many, run side by side, default 2).
#
# Which libcurl the tests use: curl's build links its tool and its libtests against its own
# lib/.libs/libcurl.so.4. We build that library (same source, same soname, Debian's versioned
# symbols) only so that the build completes, then replace it by a link to the SYSTEM libcurl
# (Debian's libcurl4, which the package's source is the source of): every curl and libtest
# process of the suite runs the real Debian library, and the preload interposes exactly what a
# user's program would meet.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${BUILD_DIR:-$root/build}")
work=$(realpath -m "${CURL_SUITE_DIR:-$build/curl-suite}")
timeout_s=${CURL_SUITE_TEST_TIMEOUT:-60}
expected_on=$root/tests/curl-suite/expected-on.txt
jobs=${CURL_SUITE_JOBS:-2}
shards=${CURL_SUITE_SHARDS:-2}
[[ $shards =~ ^[1-9][0-9]?$ ]] || { echo "curl-suite: CURL_SUITE_SHARDS=$shards: not a number of shards (1-99)" >&2; exit 2; }

# awk reads to the end (no `exit`): leaving early could kill ldconfig with SIGPIPE mid-write, which
# pipefail turns into this script's exit 141 (CI met it on a loaded machine).
system_lib=$(ldconfig -p | awk '/libcurl\.so\.4 .*x86-64/ && !found {print $NF; found = 1}')
[ -n "$system_lib" ] || { echo "curl-suite: no system libcurl.so.4 (libcurl4)" >&2; exit 1; }
version=$(dpkg-query -W -f='${Version}' libcurl4)
upstream=${version%%-*}
src=$work/curl-$upstream

# Packages to build curl's tool and test tools (the subset of debian/control's Build-Depends
# that the OpenSSL flavour needs) and to run its HTTP(S) tests.
packages=(dpkg-dev autoconf automake libtool make gcc perl python3 libssl-dev zlib1g-dev
  libnghttp2-dev libpsl-dev libidn2-dev libbrotli-dev libzstd-dev stunnel4)

install_deps() {
  # shellcheck source=scripts/apt-missing.sh
  . "$root/scripts/apt-missing.sh"
  find_missing "${packages[@]}"
  [ ${#missing[@]} -eq 0 ] && return 0
  need_root curl-suite
  "${as_root[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
  "${as_root[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
}

fetch() {
  [ -f "$src/.curl-suite-fetched" ] && return 0
  rm -rf "$src"
  mkdir -p "$work"
  # shellcheck source=scripts/apt-source.sh
  . "$root/scripts/apt-source.sh"
  apt_source "$work" "curl=$version"
  # apt-get source applies the whole series; the last two patches make the GnuTLS and NSS
  # flavours (debian/rules pops them for the OpenSSL one, which is libcurl4).
  (cd "$src" && patch -s -R -p1 <debian/patches/99_nss.patch && patch -s -R -p1 <debian/patches/90_gnutls.patch)
  touch "$src/.curl-suite-fetched"
}

build_curl() {
  [ -f "$src/.curl-suite-built" ] && return 0
  # The compilers' chatter goes to a log, shown when a step fails.
  local log=$work/build.log
  # (Each step is chained with &&: set -e does not apply inside an `if` condition.)
  if ! (
    cd "$src" &&
    autoreconf -fi &&
    # debian/rules' CONFIGURE_ARGS for the OpenSSL flavour, less LDAP, GSSAPI, libssh2 and RTMP
    # (their tests are not HTTP tests; the library the tests run is the system one anyway).
    ./configure --disable-dependency-tracking --disable-symbol-hiding --enable-versioned-symbols \
      --enable-threaded-resolver --with-nghttp2 --with-openssl --disable-ldap --without-libssh2 \
      --without-librtmp --with-ca-path=/etc/ssl/certs \
      --with-ca-bundle=/etc/ssl/certs/ca-certificates.crt &&
    make -j"$jobs" &&
    make -j"$jobs" -C tests/server &&
    make -j"$jobs" -C tests/libtest
  ) >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "curl-suite: building curl failed (whole log: $log)" >&2
    return 1
  fi
  swap_in_system_lib
  touch "$src/.curl-suite-built"
}

swap_in_system_lib() {
  local f
  for f in "$src"/lib/.libs/libcurl.so.4*; do
    [ -L "$f" ] && [ "$(readlink "$f")" = "$system_lib" ] && continue
    rm -f "$f"
    ln -s "$system_lib" "$f"
  done
}

# The tests each shard of a run gets: runtests.pl's arguments, one line per shard. Given only
# keywords (the default: HTTP), every test file's number dealt round-robin, each shard's list
# with the keywords after it: runtests.pl then runs the listed tests that have one of the
# keywords and are not in DISABLED, exactly the set the keywords alone select. Given test
# numbers, those dealt out. The runs barely use the CPU (one test at a time, mostly waiting on
# its servers), so the shards side by side take about 1/shards of the time.
shard_args() {
  local -a numbers=() words=()
  local t i
  for t in "${tests[@]}"; do
    if [[ $t =~ ^[0-9]+$ ]]; then numbers+=("$t"); else words+=("$t"); fi
  done
  if [ ${#numbers[@]} -eq 0 ]; then
    mapfile -t numbers < <(find "$src/tests/data" -maxdepth 1 -type f -name 'test[0-9]*' -printf '%f\n' |
      sed -n 's/^test\([0-9][0-9]*\)$/\1/p' | sort -n)
  elif [ ${#words[@]} -gt 0 ]; then
    echo "${tests[*]}"  # numbers and keywords mixed: runtests.pl's own reading, in one shard
    return
  fi
  for ((i = 0; i < shards; i++)); do
    local -a mine=()
    for ((t = i; t < ${#numbers[@]}; t += shards)); do mine+=("${numbers[t]}"); done
    [ ${#mine[@]} -gt 0 ] && echo "${words[*]} ${mine[*]}"
  done
}

# One run of the tests in its own copy of tests/ (runtests.pl keeps its logs and its servers'
# port files in tests/log; each server picks a free port): $1 names the run (its directory), $2
# the tests (runtests.pl's arguments, space-separated), the rest is its environment. runtests.pl
# is told to log each test command's exit status (CURLSUITE-EXIT) so that a crash is told apart
# from a wrong answer.
run_one() {
  local name=$1 selection=$2; shift 2
  local -a selected
  read -r -a selected <<<"$selection"
  local dir=$runs_dir/$name
  rm -rf "$dir"
  mkdir -p "$dir/xdg"
  local f
  for f in "$src"/*; do [ "$(basename "$f")" = tests ] || ln -s "$f" "$dir/"; done
  cp -a "$src/tests" "$dir/tests"
  rm -rf "$dir/tests/log"
  local log_exit='logmsg "CURLSUITE-EXIT $testnum $cmdres\\n";'
  sed -i "s/^\(\s*\)\$timetoolend{\$testnum} = Time::HiRes::time();/&\n\1$log_exit/" "$dir/tests/runtests.pl"
  grep -q CURLSUITE-EXIT "$dir/tests/runtests.pl" || { echo "curl-suite: cannot patch runtests.pl" >&2; return 1; }
  (
    cd "$dir/tests"
    # The user's own curlretry settings must not reach the runs.
    for v in $(env | sed -n 's/^\(\(CURLRETRY\|BILI_REPLAY\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
    export XDG_CONFIG_HOME=$dir/xdg
    # The default fleet, in a store of this shard's own shared by every test of it (as a user's
    # processes share theirs); nothing of another run or of the user's own store.
    mkdir -m 700 "$dir/fleet"
    export CURLRETRY_FLEET_DIR=$dir/fleet
    # runtests.pl stops altogether ("Can't start ssh server due to lack of USER name") without it.
    export USER=${USER:-$(id -un)}
    exec env "$@" perl runtests.pl -a -am -n "${selected[@]}"
  ) >"$dir/output.log" 2>&1 &
  echo $! >"$dir/pid"
}

# Kills a test command that has run longer than $timeout_s and so notes it as a hang (runtests.pl
# then sees it die of SIGKILL). Only curl and libtest processes of our runs are ever killed.
watch_runs() {
  local name pid exe age now cwd alive hz
  hz=$(getconf CLK_TCK)
  while :; do
    alive=0
    for name in "${runs[@]}"; do
      kill -0 "$(cat "$runs_dir/$name/pid")" 2>/dev/null && alive=1
    done
    [ $alive = 1 ] || break
    now=$(cut -d' ' -f1 /proc/uptime)
    for pid in /proc/[0-9]*; do
      pid=${pid#/proc/}
      exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
      case $exe in
        "$src"/src/.libs/*|"$src"/tests/libtest/*|"$work"/runs/*/tests/libtest/*) ;;
        *) continue ;;
      esac
      cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
      case $cwd in "$work"/runs/*/tests) ;; *) continue ;; esac
      # Field 22 of stat is the start time in ticks since boot (the command name may hold spaces).
      age=$(awk -v now="$now" -v hz="$hz" '{sub(/.*\) /, ""); print int(now - $20 / hz)}' \
        "/proc/$pid/stat" 2>/dev/null) || continue
      [ -n "$age" ] && [ "$age" -gt "$timeout_s" ] || continue
      echo "$pid $exe" >>"${cwd%/tests}/hung-pids"
      kill -KILL "$pid" 2>/dev/null || true
    done
    sleep 5
  done
  for name in "${runs[@]}"; do wait "$(cat "$runs_dir/$name/pid")" 2>/dev/null || true; done
}

# "test outcome" lines (PASS, FAIL, CRASH, HANG) for one run, from runtests.pl's output.
results_of() {
  perl -ne '
    if (/^(PASS|FAIL): (\d+) /) { $r{$2} = $1; }
    elsif (/^CURLSUITE-EXIT (\d+) (\d+)/) { $exit{$1} = $2; }
    # Some failures (no server input at all) print no FAIL line; the summary names them.
    elsif (/^TESTFAIL: These test cases failed: (.*)/) { $r{$_} //= "FAIL" for split " ", $1; }
    END {
      for my $t (keys %exit) {
        my $c = $exit{$t};
        # 128+N: the shell saw signal N; 2000+N: runtests.pl did. SIGKILL is our watchdog.
        my $sig = $c >= 2000 ? $c - 2000 : ($c > 128 && $c < 160 ? $c - 128 : 0);
        if ($sig == 9) { $r{$t} = "HANG"; } elsif ($sig) { $r{$t} = "CRASH"; }
      }
      print "$_ $r{$_}\n" for sort { $a <=> $b } keys %r;
    }' "$runs_dir/$1/output.log"
}

# The three runs of the tests in "${tests[@]}", each in shards, all in parallel, into $runs_dir:
# a shard's directory is $runs_dir/<run>.<shard>, the run's merged results $runs_dir/<run>/results.
run_three() {
  local name n selection
  local -a selections
  mapfile -t selections < <(shard_args)
  runs=()
  rm -rf "$runs_dir"
  n=0
  for selection in "${selections[@]}"; do
    run_one "plain.$n" "$selection"
    run_one "off.$n" "$selection" LD_PRELOAD="$lib" BILI_REPLAY_RETRY_MAX=1
    run_one "on.$n" "$selection" LD_PRELOAD="$lib"
    runs+=("plain.$n" "off.$n" "on.$n")
    n=$((n + 1))
  done
  watch_runs
  for name in plain off on; do
    mkdir -p "$runs_dir/$name"
    for ((n = 0; n < ${#selections[@]}; n++)); do
      results_of "$name.$n" >"$runs_dir/$name.$n/results"
      # A shard that ran nothing (its runtests.pl stopped early) would only shrink the suite.
      if [ ! -s "$runs_dir/$name.$n/results" ]; then
        echo "curl-suite: $name shard $n ran no test (see $runs_dir/$name.$n/output.log)"
        shard_failed=1
      fi
    done
    sort -n "$runs_dir/$name".[0-9]*/results >"$runs_dir/$name/results"
  done
}

run_all() {
  [ -f "$src/.curl-suite-built" ] || { echo "curl-suite: not built (run: $0 build)" >&2; exit 1; }
  swap_in_system_lib
  lib=$(realpath -m "${CURL_SUITE_LIB:-$build/shim/libcurlretry.so}")
  [ -f "$lib" ] || { echo "curl-suite: $lib missing (build curlretry first)" >&2; exit 1; }
  [ ${#tests[@]} -gt 0 ] || tests=(HTTP)
  local started=$SECONDS status=0
  runs_dir=$work/runs
  shard_failed=0
  run_three
  echo "curl-suite: the three runs took $((SECONDS - started)) s ($shards shards each, side by side)"
  compare_runs "$runs_dir" || status=$?
  [ $shard_failed = 0 ] || return 1
  [ $status = 0 ] && return 0
  # A test that differs once may be one of curl's timing-sensitive ones on a loaded machine: the
  # differing tests run again, three ways, and only a difference that repeats counts. A hang or
  # a crash counts the first time.
  if [ $status = 1 ] && [ -s "$runs_dir/differing" ]; then
    mapfile -t tests <"$runs_dir/differing"
    echo "curl-suite: running the ${#tests[@]} differing tests again: ${tests[*]}"
    runs_dir=$work/runs-again
    run_three
    compare_runs "$runs_dir" && return 0
  fi
  return 1
}

# Prints each run's counts and the tests whose outcome differs from the plain run; exits 1 on a
# difference with retries off, an unexpected one with retries on, a hang or a crash.
compare_runs() {
  python3 - "$1" "$expected_on" <<'EOF'
import sys

runs, expected_file = sys.argv[1], sys.argv[2]


def load(name):
    out = {}
    for line in open(f"{runs}/{name}/results"):
        t, r = line.split()
        out[int(t)] = r
    return out


plain, off, on = load("plain"), load("off"), load("on")
expected = {}
for line in open(expected_file):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    num, _, why = line.partition(" ")
    expected[int(num)] = why.strip()
bad = 0  # 1: differences only (worth running again), 2: a hang or a crash
differing = set()
if not plain:
    print("curl-suite: the run without curlretry ran no test (see its output.log)")
    bad = 2
for name, res in (("plain", plain), ("off", off), ("on", on)):
    counts = {}
    for r in res.values():
        counts[r] = counts.get(r, 0) + 1
    print(f"curl-suite: {name:5} {len(res)} tests run: " + ", ".join(f"{counts[k]} {k}" for k in sorted(counts)))
for name, res in (("plain", plain), ("off", off), ("on", on)):
    for t, r in sorted(res.items()):
        if r in ("HANG", "CRASH"):
            print(f"curl-suite: {name}: test {t} {r}")
            bad = 2
for name, res in (("off", off), ("on", on)):
    for t in sorted(set(plain) | set(res)):
        a, b = plain.get(t, "MISSING"), res.get(t, "MISSING")
        if a == b:
            continue
        if name == "on" and t in expected:
            print(f"curl-suite: on: test {t} {a} -> {b} (expected: {expected[t]})")
            continue
        print(f"curl-suite: {name}: test {t} {a} -> {b} UNEXPECTED")
        bad = max(bad, 1)
        differing.add(t)
for t, why in sorted(expected.items()):
    if t in plain and plain.get(t) == on.get(t):
        print(f"curl-suite: on: test {t} is listed as expected to differ but does not ({why})")
with open(f"{runs}/differing", "w") as f:
    f.write("".join(f"{t}\n" for t in sorted(differing)))
print("curl-suite: " + ("FAILED" if bad else "OK"))
sys.exit(bad)
EOF
}

stage=${1:-all}
[ $# -gt 0 ] && shift
tests=("$@")
case $stage in
  fetch) install_deps; fetch ;;
  build) install_deps; fetch; build_curl ;;
  run) run_all ;;
  compare) compare_runs "${CURL_SUITE_RUNS:-$work/runs}" ;;
  all) install_deps; fetch; build_curl; run_all ;;
  *) echo "usage: $0 [all|fetch|build|run|compare] [TEST...]" >&2; exit 2 ;;
esac
