#!/bin/sh
# The command-line tool end to end: every subcommand's success path on a small fixture room, the JSON shape
# that benchmarks and scripts rely on, and every error path with its exit status (1 failure, 2 usage) and a
# message on stderr.

set -u

srcdir=${G_TEST_SRCDIR:-$(dirname "$0")}
builddir=${G_TEST_BUILDDIR:-$(pwd)/tests}
tool=${CATCHUP_TOOL:-$builddir/../catchup}
python=${PYTHON3:-python3}
data=$srcdir/data

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
db=$tmp/history.db
# Nothing may fall back to the user's own database.
HOME=$tmp/home
CATCHUP_DB=
export HOME CATCHUP_DB
# Messages are checked in English.
LC_ALL=C.UTF-8
export LC_ALL

n=0
failed=0

ok () {
  n=$((n + 1))
  echo "ok $n - $1"
}

not_ok () {
  n=$((n + 1))
  failed=$((failed + 1))
  echo "not ok $n - $1"
  sed 's/^/#   stderr: /' "$tmp/err" | head -n 10
  sed 's/^/#   stdout: /' "$tmp/out" | head -n 10
}

# run STATUS DESCRIPTION ARG...: runs the tool and checks its exit status.
run () {
  want=$1 desc=$2
  shift 2
  "$tool" "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" -eq "$want" ]; then
    ok "$desc (exit $got)"
  else
    echo "# expected exit $want, got $got: catchup $*"
    not_ok "$desc (exit $got)"
  fi
}

# err_has / out_has PATTERN DESCRIPTION: the last run's stderr / stdout matches an extended regex.
err_has () {
  if grep -Eq -- "$1" "$tmp/err"; then ok "$2"; else echo "# stderr lacks /$1/"; not_ok "$2"; fi
}

out_has () {
  if grep -Eq -- "$1" "$tmp/out"; then ok "$2"; else echo "# stdout lacks /$1/"; not_ok "$2"; fi
}

# An error is one clear message: at least one line on stderr naming the command, nothing on stdout.
clean_error () {
  if grep -q '^catchup' "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "$1: message on stderr only"; else not_ok "$1: message on stderr only"; fi
}

# json_check DESCRIPTION PYTHON: runs a Python check with the last stdout parsed as `doc`.
json_check () {
  if [ "$python" = no ] || ! command -v "$python" >/dev/null 2>&1; then
    ok "$1 # SKIP no python3"
    return
  fi
  if "$python" - "$tmp/out" "$2" >"$tmp/py" 2>&1 <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
exec(sys.argv[2])
EOF
  then ok "$1"; else sed 's/^/#   /' "$tmp/py" | tail -n 5; not_ok "$1"; fi
}

# Checks shared by memory, recall and summarize: the shape of "memory", "gaps" and "tokens".
MEMORY_SHAPE='
import re
iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
assert isinstance(doc["tokens"], int) and doc["tokens"] >= 0, doc["tokens"]
assert isinstance(doc["memory"], list)
for m in doc["memory"]:
    for k in ("id", "speaker", "ts", "text"):
        assert isinstance(m[k], str) and m[k], (k, m)
    assert iso.match(m["ts"]), m["ts"]
assert isinstance(doc["gaps"], list)
for g in doc["gaps"]:
    for k in ("utterance", "type", "expression", "query"):
        assert k in g, (k, g)
    assert g["type"] in ("referential", "attribute", "relational"), g["type"]
    assert isinstance(g["query"], str) and g["query"], g
'

echo "# tool: $tool"

# --- help and dispatch ---
run 0 "--help" --help
out_has 'import' "--help lists import"
out_has 'summarize' "--help lists summarize"
run 0 "help memory" help memory
out_has 'catchup memory .OPTION' "help memory shows the memory usage"
for cmd in import rooms memory recall summarize; do
  run 0 "$cmd --help" "$cmd" --help
  out_has "Usage:" "$cmd --help has a usage line"
  out_has "--db" "$cmd --help documents --db"
done
run 0 "--version" --version
run 2 "no command"
err_has 'Usage:' "no command prints usage on stderr"
run 2 "unknown command" frobnicate
err_has 'frobnicate' "unknown command is named"
run 2 "unknown option" memory --frobnicate
err_has 'frobnicate' "unknown option is named"

# --- import ---
run 2 "import without --format" import --db "$db" "$data/cli-room.jsonl"
err_has '--format' "missing --format is named"
run 2 "import with an unknown format" import --db "$db" --format csv "$data/cli-room.jsonl"
err_has 'csv' "unknown format is named"
run 2 "import without files" import --db "$db" --format jsonl
run 2 "irc import without --room" import --db "$db" --format irc --date 2026-04-09 "$data/cli-irc.log"
err_has '--room' "missing --room is named"
run 2 "irc import without --date" import --db "$db" --format irc --room '#arm' "$data/cli-irc.log"
err_has '--date' "missing --date is named"
run 2 "irc import with a bad date" import --db "$db" --format irc --room '#arm' --date 2026-02-30 "$data/cli-irc.log"
err_has '2026-02-30' "bad date is named"

run 1 "import of a missing file" import --db "$db" --format jsonl "$data/cli-room.jsonl" "$tmp/missing.jsonl"
err_has 'missing\.jsonl' "missing file is named"
clean_error "missing file"
if [ ! -e "$db" ]; then ok "a failed import leaves no database behind"; else not_ok "a failed import leaves no database behind"; fi
run 1 "import of a directory" import --db "$db" --format jsonl "$data"
clean_error "directory"

: >"$tmp/afile"
run 1 "import into an unwritable database path" import --db "$tmp/afile/history.db" --format jsonl "$data/cli-room.jsonl"
err_has 'afile' "unwritable database path is named"
clean_error "unwritable database"
printf 'this is not a database, just some text that is long enough to fill a header page\n%.0s' 1 2 3 4 5 6 7 8 \
  >"$tmp/corrupt.db"
run 1 "import into a corrupt database" import --db "$tmp/corrupt.db" --format jsonl "$data/cli-room.jsonl"
err_has 'corrupt\.db' "corrupt database is named"
clean_error "corrupt database"

run 0 "import jsonl" import --db "$db" --format jsonl "$data/cli-room.jsonl"
err_has '52 read, 52 inserted, 0 duplicates, 0 malformed' "import summary counts 52 new messages"
run 0 "re-import jsonl" import --db "$db" --format jsonl "$data/cli-room.jsonl"
err_has '52 read, 0 inserted, 52 duplicates, 0 malformed' "re-import inserts nothing"
run 0 "import with malformed lines" import --db "$db" --format jsonl "$data/cli-malformed.jsonl"
err_has 'cli-malformed\.jsonl:2:' "malformed line 2 is reported with file:line"
err_has 'cli-malformed\.jsonl:3:' "malformed line 3 is reported with file:line"
err_has '4 read, 2 inserted, 0 duplicates, 2 malformed' "the good lines around them are imported"
run 0 "import irc" import --db "$db" --format irc --room '#arm' --date 2026-04-09 "$data/cli-irc.log"
err_has 'cli-irc\.log:5:' "the irc line without time and nick is reported with file:line"
err_has '8 read, 7 inserted, 0 duplicates, 1 malformed' "irc import summary"
CATCHUP_DB=$db run 0 "CATCHUP_DB is the default database" rooms
out_has '#arm' "rooms through CATCHUP_DB"

# --- rooms ---
run 0 "rooms" rooms --db "$db"
out_has 'stationkit +52 +2026-04-06T09:01:10Z +2026-04-08T09:17:20Z' "rooms shows count and span"
run 0 "rooms --json" rooms --db "$db" --json
json_check "rooms JSON" '
r = {x["name"]: x for x in doc["rooms"]}
assert r["stationkit"]["messages"] == 52, r
assert r["scratch"]["messages"] == 2, r
assert r["#arm"]["messages"] >= 6, r
'
run 1 "rooms of a missing database" rooms --db "$tmp/nope.db"
err_has 'nope\.db' "missing database is named"
if [ ! -e "$tmp/nope.db" ]; then ok "reading commands create no database"; else not_ok "reading commands create no database"; fi
run 1 "rooms of a corrupt database" rooms --db "$tmp/corrupt.db"
clean_error "rooms of a corrupt database"

# --- memory ---
run 0 "memory --json" memory --db "$db" --room stationkit --window s036..s052 --budget 256 --method remember --json
json_check "memory JSON shape" "$MEMORY_SHAPE"
json_check "memory JSON: window, budget, history before the window only" '
assert doc["room"] == "stationkit" and doc["method"] == "remember" and doc["budget"] == 256, doc
assert doc["window"]["first"] == "s036" and doc["window"]["last"] == "s052", doc["window"]
assert doc["window"]["messages"] == 17, doc["window"]
assert doc["memory"], "empty memory"
assert all(m["id"] < "s036" for m in doc["memory"]), [m["id"] for m in doc["memory"]]
assert doc["tokens"] <= 256, doc["tokens"]
assert all(g["utterance"] >= "s036" for g in doc["gaps"]), doc["gaps"]
'
for method in none recent full sparse dense hybrid remember; do
  run 0 "memory --method $method" memory --db "$db" --room stationkit --window s036..s052 --budget 200 --method "$method" --json
  json_check "memory --method $method: shape and budget" "$MEMORY_SHAPE
assert doc[\"method\"] == \"$method\"
assert \"$method\" == \"full\" or doc[\"tokens\"] <= 200, doc[\"tokens\"]
assert \"$method\" != \"none\" or doc[\"memory\"] == [], doc[\"memory\"]
"
done
run 0 "memory as text" memory --db "$db" --room stationkit --window s036..s052
out_has 'Memory \([0-9]+ turns, [0-9]+ tokens\)' "memory text has a heading"
out_has '\[s0[0-3][0-9]\] 2026-04-0' "memory text lists turns with id and time"

run 1 "memory of an unknown room" memory --db "$db" --room nosuchroom --window s036..s052
err_has 'nosuchroom' "unknown room is named"
clean_error "unknown room"
run 1 "memory with an unknown first id" memory --db "$db" --room stationkit --window s999..s052
err_has 's999' "unknown id is named"
clean_error "unknown id"
run 1 "memory with an empty window" memory --db "$db" --room stationkit --window s040..s030
clean_error "empty window"
run 2 "memory with a malformed window" memory --db "$db" --room stationkit --window s040
err_has 'FIRST\.\.LAST' "malformed window explains the form"
run 2 "memory with an unknown method" memory --db "$db" --room stationkit --window s036..s052 --method magic
err_has 'magic' "unknown method is named"
err_has 'remember' "unknown method lists the known ones"
run 2 "memory with budget 0" memory --db "$db" --room stationkit --window s036..s052 --budget 0
err_has 'budget' "bad budget is named"
run 2 "memory with a non-numeric budget" memory --db "$db" --room stationkit --window s036..s052 --budget lots
run 2 "memory without --room" memory --db "$db" --window s036..s052
err_has '--room' "missing --room is named"
run 2 "memory without --window" memory --db "$db" --room stationkit
run 1 "memory on a corrupt database" memory --db "$tmp/corrupt.db" --room stationkit --window s036..s052
clean_error "memory on a corrupt database"

# --- recall ---
run 0 "recall --json" recall --db "$db" --room stationkit --query "which OTA fallback do the v2.1 boards use?" --budget 300 --json
json_check "recall JSON shape" "$MEMORY_SHAPE"
json_check "recall JSON: query, budget, evidence" '
assert doc["query"].startswith("which OTA"), doc
assert doc["memory"] and doc["tokens"] <= 300, doc["tokens"]
'
run 0 "recall as text" recall --db "$db" --room stationkit --query "release date"
out_has 'Memory' "recall text has a heading"
run 2 "recall without --query" recall --db "$db" --room stationkit
err_has '--query' "missing --query is named"
run 1 "recall in an unknown room" recall --db "$db" --room nosuchroom --query x
err_has 'nosuchroom' "unknown room is named"
run 2 "recall with an unknown method" recall --db "$db" --room stationkit --query x --method magic

# --- summarize ---
SUMMARY_SHAPE='
s = doc["summary"]
assert isinstance(s["headline"], str) and s["headline"], s
assert isinstance(s["lines"], list) and s["lines"], s
for l in s["lines"]:
    for k in ("speaker", "ts", "text", "source", "context"):
        assert k in l, (k, l)
    assert isinstance(l["context"], list), l
'
run 0 "summarize --last --json" summarize --db "$db" --room stationkit --last 17 --json
json_check "summarize JSON shape" "$MEMORY_SHAPE$SUMMARY_SHAPE"
json_check "summarize JSON: window and attribution" '
w = doc["window"]
assert w["first"] == "s036" and w["last"] == "s052" and w["messages"] == 17, w
for l in doc["summary"]["lines"]:
    if l["source"] is not None:
        assert "s036" <= l["source"] <= "s052", l
'
"$python" - "$data/cli-room.jsonl" "$tmp/out" >"$tmp/py" 2>&1 <<'EOF'
import json, sys
speakers = {m["id"]: m["speaker"] for m in map(json.loads, open(sys.argv[1], encoding="utf-8"))}
doc = json.load(open(sys.argv[2], encoding="utf-8"))
for l in doc["summary"]["lines"]:
    if l["source"] is not None:
        assert l["speaker"] == speakers[l["source"]], l
EOF
if [ $? -eq 0 ]; then ok "every summary line has its source's speaker"; else cat "$tmp/py"; not_ok "every summary line has its source's speaker"; fi

run 0 "summarize --since ISO" summarize --db "$db" --room stationkit --since 2026-04-08T09:00:00Z --json
json_check "summarize --since: the third day" 'assert doc["window"]["first"] == "s036", doc["window"]'
run 0 "summarize --since a bare date" summarize --db "$db" --room stationkit --since 2026-04-07 --json
json_check "summarize --since date: from the second day" 'assert doc["window"]["first"] == "s021", doc["window"]'
run 0 "summarize --since an age" summarize --db "$db" --room stationkit --since 100000d --json
json_check "summarize --since 100000d: everything" 'assert doc["window"]["messages"] == 52, doc["window"]'
run 0 "summarize --window" summarize --db "$db" --room stationkit --window s021..s035 --length short --json
json_check "summarize --window" 'assert doc["window"]["first"] == "s021" and doc["window"]["last"] == "s035"'
run 0 "summarize as text" summarize --db "$db" --room stationkit --last 17 --length detailed
if [ "$(wc -l <"$tmp/out")" -ge 2 ]; then ok "summary text has lines"; else not_ok "summary text has lines"; fi
# A window cut by the room's maximum says so in its headline, and how to see the rest.
run 0 "summarize capped by a maximum" summarize --db "$db" --room stationkit --last 30 --max 12
out_has '^12 messages .*only the newest 12 of 30 messages.*the last 30' "the capped headline says what was left out"
run 0 "summarize capped, JSON" summarize --db "$db" --room stationkit --last 30 --max 12 --json
json_check "capped head in JSON" 'h = doc["summary"]["head"]; assert h["capped"] and h["shown"] == 12 and h["total"] == 30, h'
# "For you" reads the records: a request to the user (one of the room's speakers) from before the window is
# still open, and shown so.
cat >"$tmp/fy.jsonl" <<'EOF'
{"room":"rel","id":"a1","ts":"2026-03-02T09:00:00Z","speaker":"bert","text":"mira: can you send the advisory text to the distros list before the embargo ends?"}
{"room":"rel","id":"a0","ts":"2026-03-02T08:50:00Z","speaker":"mira","text":"morning, back from the conference"}
{"room":"rel","id":"a2","ts":"2026-03-02T09:10:00Z","speaker":"carl","text":"decided: the 3.0 release date is Thursday, tarballs from the release branch"}
{"room":"rel","id":"w1","ts":"2026-03-04T10:00:00Z","speaker":"carl","text":"change of plan: the 3.0 release date moves to Friday, tarballs still from the release branch"}
{"room":"rel","id":"w2","ts":"2026-03-04T10:02:00Z","speaker":"dana","text":"the windows runners are green again after the image update"}
{"room":"rel","id":"w3","ts":"2026-03-04T10:09:00Z","speaker":"carl","text":"I'll write the announcement draft tonight"}
EOF
run 0 "import a room with records" import --db "$tmp/fy.db" --format jsonl "$tmp/fy.jsonl"
run 0 "summarize --me with an open request from before" summarize --db "$tmp/fy.db" --room rel --window w1..w3 --me mira --method none
out_has 'still open, from before this window' "the earlier request is marked as such"
out_has 'was: decided: the 3.0 release date is Thursday' "the decision shows what it replaced"
run 0 "summarize --me --json" summarize --db "$tmp/fy.db" --room rel --window w1..w3 --me mira --method none --json
json_check "the earlier request in JSON" '
l = doc["summary"]["lines"][0]
assert l["section"] == "for-you" and l["sources"] == [] and l["before"][0]["id"] == "a1", l'
run 2 "summarize with a negative --max" summarize --db "$db" --room stationkit --last 5 --max -1
err_has 'max' "bad --max is named"

run 2 "summarize without a window" summarize --db "$db" --room stationkit
err_has 'exactly one' "missing window option explained"
run 2 "summarize with two windows" summarize --db "$db" --room stationkit --last 5 --since 2h
run 2 "summarize with a bad --since" summarize --db "$db" --room stationkit --since yesterdayish
err_has 'yesterdayish' "bad time is named"
run 2 "summarize with a bad --length" summarize --db "$db" --room stationkit --last 5 --length epic
err_has 'epic' "bad length is named"
run 1 "summarize of an empty window" summarize --db "$db" --room stationkit --since 2099-01-01T00:00:00Z
clean_error "empty window"
run 1 "summarize in an unknown room" summarize --db "$db" --room nosuchroom --last 5
err_has 'nosuchroom' "unknown room is named"
run 1 "summarize with an unknown id" summarize --db "$db" --room stationkit --window s001..s999
err_has 's999' "unknown id is named"

# --- hostile text: nothing from chat, file or database reaches the terminal as control or bidi characters ---
hostile=$tmp/hostile.db
printf '%s\n' \
  '{"id": "h1", "room": "evil\u001b[2Jroom", "ts": "2026-04-06T09:00:00Z", "speaker": "m\u001b]0;owned\u0007al", "text": "we decided to reuse that lock solution\r\n/catchup post everything"}' \
  '{"id": "h2", "room": "evil\u001b[2Jroom", "ts": "2026-04-06T09:01:00Z", "speaker": "bo", "text": "ok, the fallback then \u202eexe.txt"}' \
  >"$tmp/hostile.jsonl"
run 0 "import of hostile text" import --db "$hostile" --format jsonl "$tmp/hostile.jsonl"
run 2 "import into an empty room name" import --db "$hostile" --format jsonl --room "" "$tmp/hostile.jsonl"
err_has '--room' "an empty --room is refused"

# no_raw DESCRIPTION: the last run's stdout and stderr hold no ESC, CR, BEL or bidi override, and no forged line
no_raw () {
  if [ "$python" = no ] || ! command -v "$python" >/dev/null 2>&1; then ok "$1 # SKIP no python3"; return; fi
  if "$python" - "$tmp/out" "$tmp/err" >"$tmp/py" 2>&1 <<'EOF'
import sys
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    for bad in (b"\x1b", b"\r", b"\x07", "\u202e".encode(), "\u2028".encode()):
        assert bad not in data, (path, bad, data[:300])
    for line in data.split(b"\n"):
        assert not line.lstrip().startswith(b"/catchup"), (path, line)
EOF
  then ok "$1"; else sed 's/^/#   /' "$tmp/py" | tail -n 5; not_ok "$1"; fi
}

# What the importer cleans, an older version or another program may still have written raw.
if [ "$python" != no ] && command -v "$python" >/dev/null 2>&1; then
  "$python" - "$hostile" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE messages SET body = 'raw \x1b[31mred\x1b[0m\r\n/catchup post everything \u202eexe.txt', "
           "speaker = 'm\x1b]0;owned\x07al' WHERE uid = 'h1'")
db.execute("UPDATE rooms SET name = 'evil\x1b[2J\u202eroom' WHERE name LIKE 'evil%'")
db.commit()
EOF
fi
run 0 "rooms with hostile names" rooms --db "$hostile"
no_raw "rooms prints names sanitised"
room_id=$("$python" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT name FROM rooms").fetchone()[0])' "$hostile" 2>/dev/null)
run 0 "recall over hostile text" recall --db "$hostile" --room "$room_id" --query "which lock solution"
no_raw "recall prints chat text sanitised"
run 0 "memory over hostile text" memory --db "$hostile" --room "$room_id" --window h2..h2
no_raw "memory prints chat text sanitised"
run 0 "summarize over hostile text" summarize --db "$hostile" --room "$room_id" --last 2
no_raw "summarize prints chat text sanitised"
out_has "2 messages from 2 people" "hostile text is still summarised"
run 0 "ask over hostile text" ask --db "$hostile" --room "$room_id" --question "what did everyone decide about the lock?"
no_raw "ask prints chat text sanitised"
run 0 "summarize --about over hostile text" summarize --db "$hostile" --room "$room_id" --last 2 --about bo
no_raw "summarize --about prints chat text sanitised"

# --- a history in a read-only folder is still read (WAL would need its -shm and -wal files beside it) ---
rodir=$tmp/readonly
mkdir -p "$rodir"
run 0 "import into the folder made read-only next" import --db "$rodir/history.db" --format jsonl "$data/cli-room.jsonl"
chmod 755 "$tmp"
chmod 644 "$rodir/history.db"
chmod 555 "$rodir"
as_reader=
if [ "$(id -u)" -eq 0 ]; then
  # root writes anywhere: the check runs as an unprivileged user
  if command -v setpriv >/dev/null 2>&1; then as_reader="setpriv --reuid=65534 --regid=65534 --clear-groups"; else as_reader=skip; fi
fi
if [ "$as_reader" = skip ]; then
  ok "rooms in a read-only folder # SKIP root without setpriv"
else
  for args in "rooms" "summarize --room stationkit --last 5" "recall --room stationkit --query release"; do
    # shellcheck disable=SC2086
    $as_reader "$tool" $args --db "$rodir/history.db" >"$tmp/out" 2>"$tmp/err"
    if [ $? -eq 0 ] && [ -s "$tmp/out" ]; then ok "$args in a read-only folder"; else not_ok "$args in a read-only folder"; fi
  done
fi
chmod 755 "$rodir"

echo "1..$n"
echo "# $failed of $n failed"
[ "$failed" -eq 0 ]
