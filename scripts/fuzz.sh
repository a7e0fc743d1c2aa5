#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, in build-fuzz/: `cmake --preset
# fuzz`) and runs every one of them for SECONDS (default 60) from its committed seed corpus
# tests/fuzz/corpus/<target>. New inputs go to build-fuzz/corpus/<target>, never into the tree.
# Any crash, leak, UB, timeout (10 s per input) or OOM fails the run; the input is kept as
# build-fuzz/artifacts/<target>-<kind>-<hash> (reproduce: build-fuzz/tests/fuzz/fuzz_<target> FILE).
#
# `--seeds` is the regression pass CI runs: every committed seed once, no mutation (seconds).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (needs clang and libclang-rt-14-dev, Debian)
#   scripts/fuzz.sh --seeds
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: $0 [SECONDS] [TARGET...] | $0 --seeds"
seeds_only=0
if [ "${1:-}" = --seeds ]; then
  seeds_only=1
  shift
  [ $# -eq 0 ] || { echo "$usage" >&2; exit 2; }
fi
seconds=${1:-60}
shift || true
case $seconds in '' | *[!0-9]*) echo "$usage" >&2; exit 2 ;; esac
cd "$root"

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

echo "=== fuzz: configure and build (build-fuzz/, -j${JOBS:-$(nproc)})"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"${JOBS:-$(nproc)}" >/dev/null

if [ $seeds_only = 1 ]; then
  echo "=== fuzz: every committed seed once"
  exec ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"${JOBS:-$(nproc)}"
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for seeds in tests/fuzz/corpus/*/; do targets+=("$(basename "$seeds")"); done
fi

dict_for() {  # the dictionary a target gets, if any
  case $1 in
    config_yaml | yaml_wire) echo "-dict=$root/tests/fuzz/dict/config_yaml.dict" ;;
    retry_after | classify | shim_response | proxy_request) echo "-dict=$root/tests/fuzz/dict/http.dict" ;;
  esac
}

mkdir -p build-fuzz/artifacts build-fuzz/logs
failed=()
start=$SECONDS
for t in "${targets[@]}"; do
  binary=build-fuzz/tests/fuzz/fuzz_$t
  [ -x "$binary" ] || { echo "fuzz.sh: no target $t ($binary)" >&2; failed+=("$t: missing"); continue; }
  work=build-fuzz/corpus/$t
  mkdir -p "$work"
  log=build-fuzz/logs/$t.log
  echo "=== fuzz_$t: ${seconds} s"
  # shellcheck disable=SC2046
  if "$binary" "$work" "tests/fuzz/corpus/$t" $(dict_for "$t") \
       -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$t-" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "    ok: ${runs:-?} inputs, ${cov:-cov: ?}, corpus $(ls "$work" | wc -l) files"
  else
    echo "    FAILED (log: $log):"
    grep -E "ERROR|runtime error|SUMMARY|invariant failed|Test unit written" "$log" | sed -n '1,20s/^/    /p'
    failed+=("$t")
  fi
done

echo "=== fuzz: ${#targets[@]} targets, $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "no crash, leak, UB or timeout"
