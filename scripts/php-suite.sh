#!/usr/bin/env bash
# PHP's own ext/curl tests under the preload (issue 25 item 4): fetch Debian's source of the
# installed PHP, and run its ext/curl/tests/*.phpt with run-tests.php against the INSTALLED
# php-cli + php-curl (the system libcurl), three ways in parallel:
#   plain  without curlretry
#   off    LD_PRELOAD=libcurlretry.so with BILI_REPLAY_RETRY_MAX=1 ("exactly as without curlretry")
#   on     LD_PRELOAD=libcurlretry.so with the default policy
# then print the tests whose outcome differs from the plain run. Fails on any difference with
# retries off, on any difference with retries on that tests/php-suite/expected-on.txt does not
# list, and when the preload did not reach the tests' PHP processes.
#
#   scripts/php-suite.sh [all|fetch|run] [TEST...]   (TEST: a .phpt name under ext/curl/tests,
#                                                     default: all of them)
# Environment: PHP_SUITE_DIR (work directory, default build/php-suite), BUILD_DIR (where
# libcurlretry.so was built, default build/), PHP_SUITE_LIB (the library to preload, default
# $BUILD_DIR/shim/libcurlretry.so), PHP_SUITE_TEST_TIMEOUT (seconds one test may run, default 60).
#
# Every server is local: the tests start their own `php -S localhost:0` (ext/curl/tests/server.inc)
# and run-tests.php runs with --offline, which skips the tests that would reach the internet.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${BUILD_DIR:-$root/build}")
work=$(realpath -m "${PHP_SUITE_DIR:-$build/php-suite}")
timeout_s=${PHP_SUITE_TEST_TIMEOUT:-60}
expected_on=$root/tests/php-suite/expected-on.txt
php=$(command -v php || true)

packages=(php-cli php-curl dpkg-dev)

install_deps() {
  # shellcheck source=scripts/apt-missing.sh
  . "$root/scripts/apt-missing.sh"
  find_missing "${packages[@]}"
  if [ ${#missing[@]} -gt 0 ]; then
    need_root php-suite
    "${as_root[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
    "${as_root[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
  fi
  php=$(command -v php)
}

# The Debian source package of the installed curl extension, e.g. php8.2 8.2.36-1~deb12u1.
installed_source() {
  local branch
  branch=$("$php" -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
  dpkg-query -W -f='${source:Package} ${source:Version}\n' "php$branch-curl"
}

fetch() {
  [ -f "$work/src/.php-suite-fetched" ] && return 0
  # shellcheck source=scripts/apt-source.sh
  . "$root/scripts/apt-source.sh"
  local package version candidates v
  read -r package version < <(installed_source)
  rm -rf "$work/src"
  mkdir -p "$work/src"
  # The installed version's source first. A security update's source may be gone from the mirror
  # while its binaries stay installed: then the newest source of the same branch that is there
  # (its ext/curl tests are what the installed extension's would be, give or take a fix), said.
  if ! apt_source "$work/src" "$package=$version" 2>"$work/apt-source.log"; then
    mapfile -t candidates < <(apt-cache -o "Dir::Etc::SourceList=$work/src/apt/none.list" \
      -o "Dir::Etc::SourceParts=$work/src/apt/parts" -o "Dir::State::Lists=$work/src/apt/lists" \
      -o "Dir::Cache=$work/src/apt/cache" showsrc "$package" 2>/dev/null |
      sed -n 's/^Version: //p' | sort -rV | uniq)
    local got=
    for v in "${candidates[@]}"; do
      [ "$v" = "$version" ] && continue
      if apt_source "$work/src" "$package=$v" 2>>"$work/apt-source.log"; then
        got=$v
        break
      fi
    done
    if [ -z "$got" ]; then
      cat "$work/apt-source.log" >&2
      echo "php-suite: no source of $package on the configured Debian mirrors" >&2
      return 1
    fi
    echo "php-suite: the source of the installed $package $version is not on the mirror; using $got's ext/curl tests"
    version=$got
  fi
  local dir
  dir=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name "$package-*" -print -quit)  # no `| head`: SIGPIPE under pipefail
  [ -n "$dir" ] && [ -f "$dir/run-tests.php" ] && [ -d "$dir/ext/curl/tests" ] ||
    { echo "php-suite: $package's source has no run-tests.php and ext/curl/tests" >&2; return 1; }
  ln -sfn "$dir" "$work/src/php"
  echo "$package $version" >"$work/src/.php-suite-fetched"
}

# One run in its own copy of run-tests.php and ext/curl (run-tests.php writes each test's
# .php/.out/.diff beside it): $1 names the run, $2 is its port, the rest is its environment.
run_one() {
  local name=$1 port=$2; shift 2  # the run's own port for the one fixed-port test; its environment
  local dir=$runs_dir/$name
  rm -rf "$dir"
  mkdir -p "$dir/ext" "$dir/xdg"
  cp -a "$work/src/php/run-tests.php" "$dir/"
  cp -a "$work/src/php/ext/curl" "$dir/ext/"
  # One test listens on a fixed port, on every address (curl_postfields_array.phpt: 0.0.0.0:29999):
  # in each run's copy it listens on loopback only, on a port of the run's own, so that the
  # three runs side by side never take each other's port.
  sed -i -e "s#tcp://0\.0\.0\.0:29999#tcp://127.0.0.1:$port#" -e "s#127\.0\.0\.1:29999#127.0.0.1:$port#" \
    "$dir/ext/curl/tests/curl_postfields_array.phpt"
  grep -q "tcp://127.0.0.1:$port" "$dir/ext/curl/tests/curl_postfields_array.phpt" ||
    { echo "php-suite: cannot move curl_postfields_array.phpt to loopback" >&2; return 1; }
  local selected=() t
  for t in "${tests[@]}"; do selected+=("ext/curl/tests/${t%.phpt}.phpt"); done
  [ ${#selected[@]} -gt 0 ] || selected=(ext/curl/tests)
  (
    cd "$dir"
    # The user's own curlretry settings must not reach the runs.
    for v in $(env | sed -n 's/^\(\(CURLRETRY\|BILI_REPLAY\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
    export XDG_CONFIG_HOME=$dir/xdg
    # A session of its own (setsid execs in place: same pid), so that a run stopped at the
    # deadline takes its tests and their php -S servers with it.
    exec setsid env "$@" TEST_PHP_EXECUTABLE="$php" NO_INTERACTION=1 "$php" run-tests.php -q --offline --no-color \
      --set-timeout "$timeout_s" -W "$dir/status" "${selected[@]}"
  ) >"$dir/output.log" 2>&1 &
  echo $! >"$dir/pid"
}

# Proof that run-tests.php hands the preload to the tests' PHP processes: one test, with an
# attempt log, must leave attempts in it (the three runs themselves keep the default settings).
probe_preload() {
  local dir=$runs_dir/probe
  rm -rf "$dir"
  mkdir -p "$dir/ext" "$dir/xdg"
  cp -a "$work/src/php/run-tests.php" "$dir/"
  cp -a "$work/src/php/ext/curl" "$dir/ext/"
  (
    cd "$dir"
    for v in $(env | sed -n 's/^\(\(CURLRETRY\|BILI_REPLAY\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
    XDG_CONFIG_HOME=$dir/xdg LD_PRELOAD=$lib CURLRETRY_EVENTS=$dir/events.jsonl TEST_PHP_EXECUTABLE="$php" \
      NO_INTERACTION=1 "$php" run-tests.php -q --offline --no-color -W "$dir/status" \
      ext/curl/tests/curl_basic_001.phpt
  ) >"$dir/output.log" 2>&1 || true
  if ! [ -s "$dir/events.jsonl" ]; then
    cat "$dir/output.log" >&2
    echo "php-suite: the preload did not reach the tests' PHP processes (no attempt in $dir/events.jsonl)" >&2
    return 1
  fi
}

run_all() {
  [ -f "$work/src/.php-suite-fetched" ] || { echo "php-suite: not fetched (run: $0 fetch)" >&2; exit 1; }
  [ -n "$php" ] || { echo "php-suite: no php (install php-cli php-curl)" >&2; exit 1; }
  "$php" -r 'exit(extension_loaded("curl") ? 0 : 1);' || { echo "php-suite: php has no curl extension (php-curl)" >&2; exit 1; }
  lib=$(realpath -m "${PHP_SUITE_LIB:-$build/shim/libcurlretry.so}")
  [ -f "$lib" ] || { echo "php-suite: $lib missing (build curlretry first)" >&2; exit 1; }
  local started=$SECONDS name
  runs_dir=$work/runs
  rm -rf "$runs_dir"
  mkdir -p "$runs_dir"
  echo "php-suite: ext/curl tests of $(cat "$work/src/.php-suite-fetched"), run by $("$php" -r 'echo PHP_VERSION;')"
  probe_preload
  runs=(plain off on)
  run_one plain 29997
  run_one off 29998 LD_PRELOAD="$lib" BILI_REPLAY_RETRY_MAX=1
  run_one on 29999 LD_PRELOAD="$lib"
  # run-tests.php bounds each test (--set-timeout); the whole run is bounded too.
  local deadline=$((SECONDS + 20 * timeout_s)) alive
  while :; do
    alive=0
    for name in "${runs[@]}"; do kill -0 "$(cat "$runs_dir/$name/pid")" 2>/dev/null && alive=1; done
    [ $alive = 1 ] || break
    if [ $SECONDS -gt $deadline ]; then
      for name in "${runs[@]}"; do kill -- "-$(cat "$runs_dir/$name/pid")" 2>/dev/null || true; done
      echo "php-suite: the runs took longer than $((20 * timeout_s)) s: stopped" >&2
      break
    fi
    sleep 1
  done
  for name in "${runs[@]}"; do wait "$(cat "$runs_dir/$name/pid")" 2>/dev/null || true; done
  echo "php-suite: the three runs took $((SECONDS - started)) s"
  compare_runs "$runs_dir"
}

# Prints each run's counts and the tests whose outcome differs from the plain run; exits 1 on a
# difference with retries off or an unexpected one with retries on.
compare_runs() {
  python3 - "$1" "$expected_on" <<'EOF'
import os, sys

runs, expected_file = sys.argv[1], sys.argv[2]


def load(name):
    out = {}
    path = f"{runs}/{name}/status"
    if not os.path.exists(path):
        return out
    for line in open(path):
        status, _, test = line.rstrip("\n").partition("\t")
        if test:
            out[os.path.basename(test)] = status
    return out


plain, off, on = load("plain"), load("off"), load("on")
expected = {}
for line in open(expected_file):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    name, _, why = line.partition(" ")
    expected[name] = why.strip()
bad = 0
if not plain:
    print("php-suite: the run without curlretry ran no test (see its output.log)")
    bad = 1
for name, res in (("plain", plain), ("off", off), ("on", on)):
    counts = {}
    for r in res.values():
        counts[r] = counts.get(r, 0) + 1
    print(f"php-suite: {name:5} {len(res)} tests: " + ", ".join(f"{counts[k]} {k}" for k in sorted(counts)))
for name, res in (("off", off), ("on", on)):
    for t in sorted(set(plain) | set(res)):
        a, b = plain.get(t, "MISSING"), res.get(t, "MISSING")
        if a == b:
            continue
        if name == "on" and t in expected:
            print(f"php-suite: on: {t} {a} -> {b} (expected: {expected[t]})")
            continue
        print(f"php-suite: {name}: {t} {a} -> {b} UNEXPECTED (diff: {runs}/{name}/ext/curl/tests/{t[:-5]}.diff)")
        bad = 1
for t, why in sorted(expected.items()):
    if t in plain and plain.get(t) == on.get(t):
        print(f"php-suite: on: {t} is listed as expected to differ but does not ({why})")
print("php-suite: " + ("FAILED" if bad else "OK"))
sys.exit(bad)
EOF
}

stage=${1:-all}
[ $# -gt 0 ] && shift
tests=("$@")
case $stage in
  fetch) install_deps; fetch ;;
  run) run_all ;;
  compare) compare_runs "${PHP_SUITE_RUNS:-$work/runs}" ;;
  all) install_deps; fetch; run_all ;;
  *) echo "usage: $0 [all|fetch|run|compare] [TEST...]" >&2; exit 2 ;;
esac
