#!/bin/sh
# Translations are complete and po/POTFILES.in is up to date.
#
#   po-complete.sh                    (make check) fail when a source file using _(), N_(), C_() or NC_() is missing
#                                     from po/POTFILES.in, when POTFILES.in is unsorted, or when any language in
#                                     po/LINGUAS has an untranslated or fuzzy message against a freshly generated
#                                     template, or translates a /command, an --option or the tool's name.
#   po-complete.sh --update-potfiles  rewrite po/POTFILES.in from the sources (used by `make update-po`)
#   po-complete.sh --report           list what is left to translate after `make update-po`
#
# Nothing is written to the source tree except by --update-potfiles.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
mode=${1:-check}
LC_ALL=C
export LC_ALL

# The directories whose C files may carry translatable strings.
scan_dirs="core plugin tool bench"

sources_with_strings() {
  (cd "$srcdir" && for d in $scan_dirs; do
     [ -d "$d" ] && find "$d" -name '*.[ch]' -type f
   done | sort | while read -r f; do
     if grep -qE '(^|[^A-Za-z0-9_])(N?C?_)[[:space:]]*\(' "$f"; then echo "$f"; fi
   done)
}

potfiles_listed() {
  sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$srcdir/po/POTFILES.in"
}

case $mode in
  --update-potfiles)
    {
      echo "# Source files with translatable strings (sorted). Regenerate with: make update-po"
      sources_with_strings
    } > "$srcdir/po/POTFILES.in.tmp" && mv "$srcdir/po/POTFILES.in.tmp" "$srcdir/po/POTFILES.in"
    echo "po/POTFILES.in: $(potfiles_listed | wc -l) files"
    exit 0 ;;
  --report|check) ;;
  *) echo "usage: $0 [--update-potfiles|--report]" >&2; exit 2 ;;
esac

XGETTEXT=${XGETTEXT:-xgettext}
MSGMERGE=${MSGMERGE:-msgmerge}
MSGFMT=${MSGFMT:-msgfmt}
for tool in "$XGETTEXT" "$MSGMERGE" "$MSGFMT"; do
  case $tool in
    :|*missing*|"") echo "gettext tools not found; skipping"; exit 77 ;;
  esac
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found; skipping"; exit 77; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/catchup-po.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0

# 1. POTFILES.in lists exactly the files that use the gettext macros, sorted.
sources_with_strings > "$tmp/expected"
potfiles_listed > "$tmp/listed"
if ! sort -c "$tmp/listed" 2>/dev/null; then
  echo "FAIL: po/POTFILES.in is not sorted" >&2
  status=1
fi
sort "$tmp/listed" > "$tmp/listed.sorted"
missing=$(comm -23 "$tmp/expected" "$tmp/listed.sorted")
stale=$(comm -13 "$tmp/expected" "$tmp/listed.sorted")
if [ -n "$missing" ]; then
  echo "FAIL: files with translatable strings missing from po/POTFILES.in (run: make update-po):" >&2
  echo "$missing" | sed 's/^/  /' >&2
  status=1
fi
for f in $stale; do
  if [ ! -f "$srcdir/$f" ]; then
    echo "FAIL: po/POTFILES.in lists $f, which does not exist" >&2
    status=1
  fi
done

# 2. A fresh template, with the options of po/Makevars.
opts=$(sed -n 's/^XGETTEXT_OPTIONS[[:space:]]*=[[:space:]]*//p' "$srcdir/po/Makevars")
# shellcheck disable=SC2086
if ! "$XGETTEXT" --default-domain=purple-catchup --directory="$srcdir" --language=C $opts \
      --files-from="$tmp/listed.sorted" --output="$tmp/template.pot" 2> "$tmp/xgettext.err"; then
  cat "$tmp/xgettext.err" >&2
  echo "FAIL: xgettext could not extract the template" >&2
  exit 1
fi
if [ ! -f "$tmp/template.pot" ]; then
  # xgettext writes nothing when there are no strings at all.
  printf 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n' > "$tmp/template.pot"
fi

# 3. Every language: no untranslated, no fuzzy, valid formats, /commands left as they are.
for lang in $(sed -e 's/#.*//' "$srcdir/po/LINGUAS"); do
  po=$srcdir/po/$lang.po
  if [ ! -f "$po" ]; then
    echo "FAIL: po/LINGUAS lists $lang but po/$lang.po does not exist" >&2
    status=1
    continue
  fi
  "$MSGMERGE" --quiet --no-wrap --previous "$po" "$tmp/template.pot" -o "$tmp/$lang.po" || { status=1; continue; }
  if ! "$MSGFMT" --check --statistics -o /dev/null "$tmp/$lang.po" 2> "$tmp/$lang.stats"; then
    cat "$tmp/$lang.stats" >&2
    echo "FAIL: po/$lang.po does not compile" >&2
    status=1
    continue
  fi
  stats=$(cat "$tmp/$lang.stats")
  fuzzy=$(echo "$stats" | sed -n 's/.* \([0-9][0-9]*\) fuzzy translation.*/\1/p')
  untrans=$(echo "$stats" | sed -n 's/.* \([0-9][0-9]*\) untranslated message.*/\1/p')
  fuzzy=${fuzzy:-0}
  untrans=${untrans:-0}
  echo "$lang: $stats"
  if [ "$fuzzy" -ne 0 ] || [ "$untrans" -ne 0 ]; then
    echo "FAIL: po/$lang.po has $untrans untranslated and $fuzzy fuzzy message(s) (run: make update-po, then translate):" >&2
    msgattrib_prog=$(command -v msgattrib 2>/dev/null)
    if [ -n "$msgattrib_prog" ]; then
      "$msgattrib_prog" --no-wrap --no-obsolete --only-fuzzy "$tmp/$lang.po" 2>/dev/null | sed -n 's/^msgid "\(..*\)"/  fuzzy: \1/p' >&2
      "$msgattrib_prog" --no-wrap --no-obsolete --untranslated "$tmp/$lang.po" 2>/dev/null | sed -n 's/^msgid "\(..*\)"/  untranslated: \1/p' >&2
    fi
    status=1
  fi
  # A /command (e.g. /catchup) in a message must appear unchanged in its translation.
  py=${PYTHON3:-python3}
  [ "$py" = no ] && py=python3
  if command -v "$py" >/dev/null 2>&1; then
    "$py" - "$tmp/$lang.po" <<'PY' || status=1
import re, sys
def unq(s):
    return bytes(s, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
entries, cur, key = [], {}, None
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("#~"):
        continue
    m = re.match(r'^(msgid|msgid_plural|msgstr(?:\[\d+\])?|msgctxt) "(.*)"$', line)
    if m:
        key = m.group(1)
        if key in ("msgid", "msgctxt") and "msgstr" in "".join(cur):
            entries.append(cur); cur = {}
        cur[key] = cur.get(key, "") + unq(m.group(2)); continue
    m = re.match(r'^"(.*)"$', line)
    if m and key:
        cur[key] += unq(m.group(1))
if cur:
    entries.append(cur)
bad = 0
# Command names, options and the tool's name are typed by the user: they must survive translation unchanged.
cmd = re.compile(r"(?<![\w</:.~])/[a-z][a-z-]+\b|(?<![\w-])--[a-z][a-z-]*\b|\bcatchup\b")
for e in entries:
    mid = e.get("msgid", "")
    strs = [v for k, v in e.items() if k.startswith("msgstr") and v]
    for c in set(cmd.findall(mid)):
        for s in strs:
            if c not in s:
                print(f"FAIL: {sys.argv[1].rsplit('/',1)[-1]}: {c} must stay as it is in the translation of {mid!r}", file=sys.stderr)
                bad = 1
sys.exit(bad)
PY
  fi
done

if [ "$mode" = --report ]; then
  exit 0
fi
exit $status
