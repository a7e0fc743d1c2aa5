#!/usr/bin/env bash
# The suite under sanitizers (issue 5, item 1), from CMakePresets.json:
#   asan  everything built with -fsanitize=address,undefined (build-asan/), the whole ctest suite,
#         then the unit-test binaries once more with LeakSanitizer on;
#   tsan  everything built with -fsanitize=thread (build-tsan/), the unit tests and the
#         integration tests whose hosts run threads or the multi API.
# Preloaded runs put the sanitizer runtime first (CURLRETRY_PRELOAD_PREFIX, read by
# tests/integration/harness.py). Every sanitizer report goes to build-*/sanitizer/reports/, so a
# report from a process whose exit status no test looks at (the upstream, a child) still counts:
# any report fails the run, and is printed.
#
#   scripts/test-sanitizers.sh [asan|tsan|all]        (default all; JOBS=N, default nproc)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
which=${1:-all}
case $which in asan | tsan | all) ;; *) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;; esac
cd "$root"

failed=()
summary=()

reports_of() {  # prints every report of a preset, returns 1 when there is one
  local dir=$root/build-$1/sanitizer/reports
  local found=0
  for f in "$dir"/*; do
    [ -e "$f" ] || continue
    found=1
    echo "=== sanitizer report $f"
    cat "$f"
  done
  return $found
}

run_preset() {
  local preset=$1 t0=$SECONDS t1 t2
  echo "=== $preset: configure and build (-j$jobs)"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j"$jobs" >/dev/null
  t1=$SECONDS
  rm -f "build-$preset"/sanitizer/reports/*
  echo "=== $preset: ctest"
  if ! ctest --preset "$preset" -j"$jobs"; then failed+=("$preset: ctest"); fi
  if [ "$preset" = asan ]; then
    # Our own programs, with leak checking (hosts run with it off: their leaks are not ours).
    echo "=== asan: unit tests with LeakSanitizer"
    for bin in build-asan/tests/unit/core/core_tests build-asan/tests/unit/config/config_tests; do
      if ! ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:exitcode=86:log_path=$root/build-asan/sanitizer/reports/lsan" \
           "$bin" --gtest_brief=1 >/dev/null; then
        failed+=("asan: $bin under LeakSanitizer")
      fi
    done
  fi
  t2=$SECONDS
  if ! reports_of "$preset"; then failed+=("$preset: sanitizer reports in build-$preset/sanitizer/reports"); fi
  summary+=("$preset: build $((t1 - t0)) s, tests $((t2 - t1)) s")
}

start=$SECONDS
[ "$which" = tsan ] || run_preset asan
[ "$which" = asan ] || run_preset tsan

echo "=== sanitizers: $((SECONDS - start)) s in all"
for line in "${summary[@]}"; do echo "    $line"; done
if [ ${#failed[@]} -gt 0 ]; then
  for f in "${failed[@]}"; do echo "FAILED: $f" >&2; done
  exit 1
fi
echo "no failures, no sanitizer reports"
