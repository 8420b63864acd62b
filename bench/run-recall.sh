#!/bin/sh
# Memory-quality benchmarks over the command-line tool: memory recall on the annotated catch-up windows
# (memory_recall.py) and evidence recall for LoCoMo questions (qa_recall.py). Prints each table after the
# command that made it, so the figures can be pasted into docs/benchmarks.md as they are.
#
# usage: bench/run-recall.sh [--shared DIR] [--build DIR] [--methods LIST] [--skip-qa | --skip-windows]
#   --shared DIR    the shared benchmark material (default: ../shared, relative to the current folder)
#   --build DIR     the build folder holding the catchup tool (default: the current folder)
#   --methods LIST  comma-separated methods for both (default: each script's own list)

set -u
shared=../shared
build=.
methods=
run_windows=yes
run_qa=yes

usage () {
  sed -n '2,12s/^# \{0,1\}//p' "$0"
  exit "$1"
}

while [ $# -gt 0 ]; do
  case $1 in
    --shared) shared=${2:?--shared needs a folder}; shift 2 ;;
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --methods) methods=${2:?--methods needs a list}; shift 2 ;;
    --skip-qa) run_qa=no; shift ;;
    --skip-windows) run_windows=no; shift ;;
    -h|--help) usage 0 ;;
    *) echo "run-recall.sh: unknown argument $1" >&2; usage 2 ;;
  esac
done

python=${PYTHON3:-python3}
# Absolute, whatever folder the scripts work in.
tool=$(cd "$build" 2>/dev/null && pwd)/catchup
if [ ! -x "$tool" ]; then
  echo "run-recall.sh: no catchup tool in $build (build first, or give --build)" >&2
  exit 1
fi
for script in memory_recall.py qa_recall.py; do
  if [ ! -f "$shared/bench/$script" ]; then
    echo "run-recall.sh: $shared/bench/$script not found (give --shared)" >&2
    exit 1
  fi
done

# run TITLE SCRIPT: one benchmark, timed, with its command line printed above its table.
run () {
  set -- "$1" "$2" --cli "$tool"
  [ -n "$methods" ] && set -- "$@" --methods "$methods"
  title=$1
  shift
  echo "== $title"
  echo "\$ python3 $shared/bench/$*"
  start=$(date +%s)
  "$python" "$shared/bench/$@" || { echo "run-recall.sh: $title failed" >&2; return 1; }
  echo "($(($(date +%s) - start)) s)"
  echo
}

status=0
[ "$run_windows" = yes ] && { run "memory recall on annotated catch-up windows" memory_recall.py || status=1; }
[ "$run_qa" = yes ] && { run "LoCoMo question evidence recall" qa_recall.py || status=1; }
exit $status
