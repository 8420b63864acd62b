#!/bin/sh
# Where the tool finds the HTTP transport module without $CATCHUP_HTTP_MODULE: the tool and the module copied
# into a tree laid out as installed (bindir, pkglibdir) under a new root, as `make install DESTDIR=...` does,
# must load it there (an endpoint that refuses the connection is then the error); without the module the error
# names what is missing.

set -u

builddir=${G_TEST_BUILDDIR:-$(pwd)/tests}
srcdir=${G_TEST_SRCDIR:-$(dirname "$0")}
module=${CATCHUP_HTTP_MODULE:-$builddir/../core/.libs/catchup-http-curl.so}
bindir=${CATCHUP_INSTALL_BINDIR:?set by make check}
pkglibdir=${CATCHUP_INSTALL_PKGLIBDIR:?set by make check}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/transport-lookup.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
root=$tmp/root
mkdir -p "$root$bindir" "$root$pkglibdir" || exit 99
cp "$builddir/../catchup" "$root$bindir/catchup" || exit 99
cp "$module" "$root$pkglibdir/" || exit 99
unset CATCHUP_HTTP_MODULE
HOME=$tmp/home
CATCHUP_DB=
LC_ALL=C.UTF-8
export HOME CATCHUP_DB LC_ALL
db=$tmp/history.db
tool=$root$bindir/catchup
"$tool" import --db "$db" --format jsonl "$srcdir/data/cli-room.jsonl" >/dev/null 2>&1 || exit 99

n=0
failed=0
# expect DESCRIPTION TEXT: the last embed's stderr holds TEXT.
expect () {
  n=$((n + 1))
  if grep -q "$2" "$tmp/err"; then echo "ok $n - $1"; else failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/#   /' "$tmp/err"; fi
}
embed () {
  "$tool" embed --db "$db" --endpoint http://127.0.0.1:1/v1 --embed-model test-embed >/dev/null 2>"$tmp/err"
}

embed
expect "the installed tool loads the module from its pkglibdir" "Could not connect to the model server"
rm "$root$pkglibdir/catchup-http-curl.so"
if [ -e "$pkglibdir/catchup-http-curl.so" ]; then
  # an installed copy at the configured pkglibdir is found last, and rightly
  n=$((n + 1))
  echo "ok $n # SKIP a module is installed in $pkglibdir"
else
  embed
  expect "without the module the error says what is missing" "HTTP transport for model servers"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
