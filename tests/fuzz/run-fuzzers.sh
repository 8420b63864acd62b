#!/bin/bash
# Runs every libFuzzer target of a build configured with --enable-fuzzing for a bounded time each.
#
#   tests/fuzz/run-fuzzers.sh BUILD_DIR SECONDS [RESULTS_DIR] [TARGET...]
#
# Each target starts from its seed corpus (tests/fuzz/corpus/NAME, read only) and a scratch corpus of what it
# finds (BUILD_DIR/fuzz-work/NAME, kept between runs so later runs start further). A crash, a leak, a timeout
# or a failed assertion leaves its input as BUILD_DIR/fuzz-work/crash-NAME-* (add it to the corpus and to a
# regression test). With RESULTS_DIR, one automake result file per target is written there (fuzz-NAME.trs).
# The exit status is non-zero when any target failed. Every run is nice'd: the fuzzers share the machine.
set -uo pipefail

build=${1:?usage: run-fuzzers.sh BUILD_DIR SECONDS [RESULTS_DIR] [TARGET...]}
seconds=${2:?usage: run-fuzzers.sh BUILD_DIR SECONDS [RESULTS_DIR] [TARGET...]}
results=${3:-}
shift $(( $# >= 3 ? 3 : $# ))
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$build/fuzz-work
failed=0

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$build"/tests/fuzz/fuzz-*; do
    [ -x "$f" ] && [ ! -d "$f" ] && targets+=("${f##*/fuzz-}")
  done
fi
[ ${#targets[@]} -gt 0 ] || { echo "run-fuzzers.sh: no fuzz targets in $build/tests/fuzz" >&2; exit 1; }

# Leaks inside GLib's and libcurl's one-time initialisation are not ours (tests/fuzz/lsan.supp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$src/lsan.supp:print_suppressions=0}

for name in "${targets[@]}"; do
  bin=$build/tests/fuzz/fuzz-$name
  mkdir -p "$work/$name"
  log=$work/$name.log
  printf 'fuzz-%s: %ss ... ' "$name" "$seconds"
  nice -n 19 "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$work/crash-$name-" \
    "$work/$name" "$src/corpus/$name" >"$log" 2>&1
  st=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ $st -eq 0 ]; then
    res=PASS
    echo "ok, ${runs:-?} runs"
  else
    res=FAIL
    failed=1
    echo "FAILED (exit $st, ${runs:-?} runs): see $log"
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|ERROR:|CRITICAL|Test artifact|Bail out' "$log" | sed 's/^/  /'
    grep -m1 'Test unit written to' "$log" | sed 's/^/  /'
  fi
  [ -n "$results" ] && printf ':test-result: %s\n' "$res" > "$results/fuzz-$name.trs"
done
exit $failed
