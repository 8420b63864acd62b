#!/bin/sh
# The sample rooms in data/rooms/ parse: every line is a JSON object with the string fields id, room, ts
# (ISO 8601 UTC), speaker and text; ids are unique, timestamps never go backwards, one room per file.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
py=${PYTHON3:-python3}
[ "$py" = no ] && py=python3
command -v "$py" >/dev/null 2>&1 || { echo "python3 not found; skipping"; exit 77; }
set -- "$srcdir"/data/rooms/*.jsonl
[ -f "$1" ] || { echo "no sample rooms in data/rooms/" >&2; exit 1; }
exec "$py" - "$@" <<'PY'
import json, re, sys
TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
ok = True
for path in sys.argv[1:]:
    name = path.rsplit("/", 1)[-1]
    ids, rooms, speakers, last_ts, n = set(), set(), set(), "", 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                print(f"{name}:{lineno}: empty line", file=sys.stderr); ok = False; continue
            try:
                m = json.loads(line)
            except ValueError as e:
                print(f"{name}:{lineno}: not JSON: {e}", file=sys.stderr); ok = False; continue
            if not isinstance(m, dict):
                print(f"{name}:{lineno}: not an object", file=sys.stderr); ok = False; continue
            for k in ("id", "room", "ts", "speaker", "text"):
                if not isinstance(m.get(k), str) or not m[k]:
                    print(f"{name}:{lineno}: field {k} missing or empty", file=sys.stderr); ok = False
            if not ok:
                continue
            if m["id"] in ids:
                print(f"{name}:{lineno}: duplicate id {m['id']}", file=sys.stderr); ok = False
            ids.add(m["id"]); rooms.add(m["room"]); speakers.add(m["speaker"])
            if not TS.match(m["ts"]):
                print(f"{name}:{lineno}: ts {m['ts']!r} is not ISO 8601 UTC", file=sys.stderr); ok = False
            elif m["ts"] < last_ts:
                print(f"{name}:{lineno}: ts goes backwards", file=sys.stderr); ok = False
            else:
                last_ts = m["ts"]
            n += 1
    if len(rooms) != 1:
        print(f"{name}: {len(rooms)} rooms in one file", file=sys.stderr); ok = False
    print(f"{name}: {n} messages, {len(speakers)} speakers, room {sorted(rooms)}")
sys.exit(0 if ok else 1)
PY
