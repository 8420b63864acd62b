#!/bin/sh
# Prints one line summarising every test result found under the given directories:
#   N passed, N failed[, N skipped]
# It reads automake's per-test .trs files (":test-result: PASS" lines), so it covers every suite that
# `make check` ran, including suites added later, and any extra .trs files a driver script wrote.
# PASS and XFAIL count as passed; FAIL, XPASS and ERROR as failed; SKIP as skipped.
# Exit status: 0 when nothing failed and at least one test passed, 1 otherwise.
[ $# -gt 0 ] || set -- .
dirs=
for dir in "$@"; do
  [ -d "$dir" ] && dirs="$dirs $dir"
done
line=$(
  if [ -n "$dirs" ]; then
    # shellcheck disable=SC2086
    find $dirs -name '*.trs' -type f -exec cat {} + 2>/dev/null
  fi | awk '
    /^:test-result:/ {
      r = $2
      if (r == "PASS" || r == "XFAIL") p++
      else if (r == "SKIP") s++
      else f++
    }
    END {
      if (s > 0) printf "%d passed, %d failed, %d skipped\n", p, f, s
      else printf "%d passed, %d failed\n", p, f
    }')
echo "$line"
case $line in
  "0 passed"*) exit 1 ;;
  *", 0 failed"*) exit 0 ;;
  *) exit 1 ;;
esac
