#!/bin/sh
# Properties of the built-in summary over every annotated dev window of the shared benchmark:
#   every cited id (line sources, context, agreed, reply, supersedes) is in the window or the memory,
#   every agreed and reply id is in the window, no context item cites a turn the annotation marks superseded,
#   no line's source is a state that another line of the same summary supersedes, and no window message is
#   shown twice (a line of its own, a reply, a question read in an answer's line).
#   tests/summary-properties.sh [PATH/TO/catchup [SHARED_DIR]]   (make check runs it on the built tool)
# Exit 77 (skipped) when the benchmark folder is not available ($CATCHUP_SHARED_DIR, or ../shared beside the
# source folder).
builddir=${G_TEST_BUILDDIR:-$(pwd)/tests}
tool=${1:-${CATCHUP_TOOL:-$builddir/../catchup}}
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
shared=${2:-${CATCHUP_SHARED_DIR:-$srcdir/../shared}}
if [ -z "$tool" ] || [ ! -x "$tool" ]; then
  echo "usage: $0 PATH/TO/catchup [SHARED_DIR]" >&2
  exit 2
fi
if [ ! -f "$shared/bench/memory_recall.py" ] || [ ! -d "$shared/bench/dev" ]; then
  echo "benchmark not available in '$shared'; skipping"
  exit 77
fi
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "python3 not found; skipping"; exit 77; }
exec "$py" - "$tool" "$shared/bench" <<'PY'
import json, os, subprocess, sys, tempfile
tool, bench = sys.argv[1], sys.argv[2]
sys.path.insert(0, bench)
from memory_recall import load_annotations, load_transcripts
dev = [os.path.join(bench, "dev")]
wins = [w for w in load_annotations(dev) if w.get("salient") or w.get("gaps")]
convs = load_transcripts(dev)
tmp = tempfile.mkdtemp(prefix="summary-props-")
db = os.path.join(tmp, "h.db")
files = []
for c in sorted({w["conv"] for w in wins}):
    path = os.path.join(tmp, c + ".jsonl")
    with open(path, "w") as f:
        for m in convs[c]:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    files.append(path)
subprocess.run([tool, "import", "--db", db, "--format", "jsonl"] + files, check=True, capture_output=True)
failures = 0
def fail(w, what):
    global failures
    failures += 1
    print(f"FAIL {w['conv']} {w['start']}..{w['end']}: {what}")
for w in wins:
    out = json.loads(subprocess.run([tool, "summarize", "--db", db, "--room", w["conv"], "--window",
                                     f"{w['start']}..{w['end']}", "--json"], check=True, capture_output=True,
                                    text=True).stdout)
    ids = [m["id"] for m in convs[w["conv"]]]
    window = set(ids[ids.index(w["start"]):ids.index(w["end"]) + 1])
    memory = {m["id"] for m in out["memory"]}
    stale = {s for g in w.get("gaps", []) for s in (g.get("superseded") or [])}
    lines = out["summary"]["lines"]
    replaced = {x["id"] for l in lines for x in l["supersedes"]}
    shown = [s for l in lines for s in l["sources"]]
    for s in {s for s in shown if shown.count(s) > 1}:
        fail(w, f"message {s} is shown twice")
    for l in lines:
        for s in l["sources"]:
            if s not in window:
                fail(w, f"source {s} is not in the window")
            if s in replaced:
                fail(w, f"line {s} shows a state another line supersedes")
        for key in ("context", "supersedes"):
            for x in l[key]:
                if x["id"] not in window | memory:
                    fail(w, f"{key} id {x['id']} is in neither window nor memory")
        for x in l["context"]:
            if x["id"] in stale:
                fail(w, f"context cites superseded {x['id']}")
        for key in ("agreed", "reply"):
            for x in l[key]:
                if x["id"] not in window:
                    fail(w, f"{key} id {x['id']} is not in the window")
print(f"{len(wins)} windows, {failures} failures")
sys.exit(1 if failures else 0)
PY
