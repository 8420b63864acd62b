#!/bin/sh
# Regression floor for the memory benchmark.
#   tests/bench-floor.sh PATH/TO/catchup [SHARED_DIR]
# Runs SHARED_DIR/bench/memory_recall.py (SHARED_DIR defaults to $CATCHUP_SHARED_DIR), parses its last line
#   memory recall (remember): X, far Y
# and fails when X or Y is below the floors below. Exit 77 (skipped) when the benchmark is not available.

# --- floors: raise these when the method improves ---
RECALL_FLOOR=0.45
FAR_FLOOR=0.22
# ----------------------------------------------------

tool=$1
shared=${2:-${CATCHUP_SHARED_DIR:-}}
if [ -z "$tool" ] || [ ! -x "$tool" ]; then
  echo "usage: $0 PATH/TO/catchup [SHARED_DIR]  (tool not found: '$tool')" >&2
  exit 2
fi
bench=$shared/bench/memory_recall.py
if [ -z "$shared" ] || [ ! -f "$bench" ]; then
  echo "benchmark not available (no bench/memory_recall.py in '${shared}'); skipping"
  exit 77
fi
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "python3 not found; skipping"; exit 77; }

out=$(mktemp "${TMPDIR:-/tmp}/catchup-bench.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
# BENCH_METHODS=recent,remember narrows the table (remember must stay last: the summary line is for the last one).
set -- --cli "$tool"
[ -n "${BENCH_METHODS:-}" ] && set -- "$@" --methods "$BENCH_METHODS"
if ! "$py" "$bench" "$@" > "$out" 2> "$out.err"; then
  cat "$out" "$out.err"
  rm -f "$out.err"
  echo "FAIL: the benchmark did not run" >&2
  exit 1
fi
rm -f "$out.err"
cat "$out"
line=$(grep '^memory recall (remember):' "$out" | tail -n 1)
recall=$(echo "$line" | sed -n 's/^memory recall (remember): \([0-9.]*\), far \([0-9.]*\).*/\1/p')
far=$(echo "$line" | sed -n 's/^memory recall (remember): \([0-9.]*\), far \([0-9.]*\).*/\2/p')
if [ -z "$recall" ] || [ -z "$far" ]; then
  echo "FAIL: no 'memory recall (remember): X, far Y' line in the benchmark output" >&2
  exit 1
fi
if awk -v r="$recall" -v f="$far" -v rf="$RECALL_FLOOR" -v ff="$FAR_FLOOR" \
     'BEGIN { exit !((r + 0 >= rf + 0) && (f + 0 >= ff + 0)) }'; then
  echo "ok: memory recall $recall (floor $RECALL_FLOOR), far $far (floor $FAR_FLOOR)"
  exit 0
fi
echo "FAIL: memory recall $recall (floor $RECALL_FLOOR), far $far (floor $FAR_FLOOR)" >&2
exit 1
