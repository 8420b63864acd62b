#!/bin/sh
# The command-line tool with a model: import (which stores the room's vectors), embed, memory with the
# remember-model method, summarize and recall against the deterministic test server on 127.0.0.1, and the
# "model" member of their JSON; an unreachable endpoint still gives the built-in summary and a notice.

set -u

srcdir=${G_TEST_SRCDIR:-$(dirname "$0")}
builddir=${G_TEST_BUILDDIR:-$(pwd)/tests}
tool=${CATCHUP_TOOL:-$builddir/../catchup}
python=${PYTHON3:-python3}
data=$srcdir/data

if [ "$python" = no ] || ! command -v "$python" >/dev/null 2>&1; then
  echo "1..0 # SKIP no python3"
  exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-cli-model.XXXXXX") || exit 99
server=
cleanup () {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
db=$tmp/history.db
HOME=$tmp/home
XDG_CONFIG_HOME=$tmp/config
CATCHUP_DB=
CATCHUP_DATA_DIR=$srcdir/../data
LC_ALL=C.UTF-8
export HOME XDG_CONFIG_HOME CATCHUP_DB CATCHUP_DATA_DIR LC_ALL
unset CATCHUP_ENDPOINT CATCHUP_MODEL CATCHUP_EMBED_MODEL CATCHUP_API_KEY

"$python" "$srcdir/llm-server.py" --port-file "$tmp/port" --lifetime 300 >/dev/null 2>&1 &
server=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$tmp/port" ] || { echo "Bail out! the test server did not start"; exit 99; }
port=$(cat "$tmp/port")
endpoint=http://127.0.0.1:$port/s/catchup/v1

n=0
failed=0
check () {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else failed=$((failed + 1)); echo "not ok $n - $2"; sed 's/^/#   /' "$tmp/err" | head -n 5; fi
}

# json_check DESCRIPTION PYTHON: the last stdout parsed as `doc`.
json_check () {
  "$python" - "$tmp/out" "$2" >"$tmp/err" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
exec(sys.argv[2])
PY
  check $? "$1"
}

model="--endpoint $endpoint --model test-chat --embed-model embed-16"

"$tool" import --db "$db" --format jsonl $model "$data/cli-room.jsonl" >"$tmp/out" 2>"$tmp/err"
check $? "import with an embedding model"
grep -q "texts embedded with embed-16" "$tmp/err"
check $? "import stores the room's vectors"

"$tool" embed --db "$db" --room stationkit $model >"$tmp/out" 2>"$tmp/err"
check $? "embed"
grep -q "^0 texts embedded" "$tmp/out"
check $? "embed after import has nothing left to do"

"$tool" memory --db "$db" --room stationkit --window s040..s052 --method remember-model $model --json \
  >"$tmp/out" 2>"$tmp/err"
check $? "memory --method remember-model"
json_check "memory JSON reports the model path" '
m = doc["model"]
assert doc["method"] == "remember-model", doc["method"]
assert m["used"] and m["notice"] is None, m
# gap detection and evidence selection
assert m["chat_calls"] == 2 and m["embed_calls_at_catchup"] == 1, m
assert m["chunk_embeddings_at_catchup"] == 0, m
assert m["selection_used"] and m["selection_candidates"] > 0 and m["selection_prompt_tokens"] <= 4096, m
assert doc["memory"], doc
ids = {x["id"] for x in doc["memory"]}
assert any(g["pool"] for g in doc["gaps"]), doc["gaps"]
for g in doc["gaps"]:
    assert len(g["pool"]) <= 30, g
    # the test server chooses the oldest candidate shown, and an id it never saw, which is dropped
    assert g["selected"] and set(g["selected"]) <= set(sum((h["pool"] for h in doc["gaps"]), [])), g
    assert set(g["selected"]) <= ids, (g, ids)
assert all(x.get("lead_in") or "gap" in x for x in doc["memory"]), doc["memory"]'

"$tool" summarize --db "$db" --room stationkit --last 20 $model --json >"$tmp/out" 2>"$tmp/err"
check $? "summarize with --endpoint"
json_check "summarize JSON: model summary, calls and tokens" '
m = doc["model"]
for k in ("used", "notice", "calls", "tokens_sent", "tokens_received", "chat_calls", "embed_calls_at_catchup"):
    assert k in m, k
assert m["used"] and m["chat_calls"] <= 3 and m["tokens_sent"] > 0 and m["tokens_received"] > 0, m
assert " said: " in doc["summary"]["lines"][0]["text"], doc["summary"]["lines"][0]'

# No data folder at all, as when the tool runs from its build folder: the prompts are built in.
env -u CATCHUP_DATA_DIR "$tool" summarize --db "$db" --room stationkit --last 20 $model --json \
  >"$tmp/out" 2>"$tmp/err"
check $? "summarize without any data folder"
json_check "the model is used with the built-in prompts" '
m = doc["model"]
assert m["used"] and m["notice"] is None, m
assert " said: " in doc["summary"]["lines"][0]["text"], doc["summary"]["lines"][0]'

"$tool" summarize --db "$db" --room stationkit --last 20 $model >"$tmp/out" 2>"$tmp/err"
check $? "summarize, text output"
grep -Eq "^Model: [0-9]+ calls \([0-9]+ chat, [0-9]+ embedding\), [0-9]+ tokens sent, [0-9]+ received; chunk embeddings computed at catch-up time: 0$" "$tmp/out"
check $? "one line of model stats"

CATCHUP_ENDPOINT=$endpoint CATCHUP_MODEL=test-chat CATCHUP_EMBED_MODEL=embed-16 \
  "$tool" recall --db "$db" --room stationkit --query "when is the release" --method remember-model --json \
  >"$tmp/out" 2>"$tmp/err"
check $? "recall with the endpoint from the environment"
json_check "recall embeds only the question" '
m = doc["model"]
assert m["used"] and m["embed_calls_at_catchup"] == 1 and m["chat_calls"] == 0, m'

"$tool" summarize --db "$db" --room stationkit --last 20 --endpoint "http://127.0.0.1:1/v1" --model m --timeout 2 \
  --json >"$tmp/out" 2>"$tmp/err"
check $? "summarize with a dead endpoint still succeeds"
json_check "the built-in summary, with one notice line" '
notice = doc["summary"]["notice"]
assert notice.startswith("Model not used: ") and notice.endswith("; this is the built-in summary."), notice
assert not doc["model"]["used"], doc["model"]'

"$tool" memory --db "$db" --room stationkit --window s040..s052 --method remember-model >"$tmp/out" 2>"$tmp/err"
test $? -eq 2
check $? "remember-model without a model is a usage error"

"$tool" memory --db "$db" --room stationkit --window s040..s052 --method dense $model --json >"$tmp/out" 2>"$tmp/err"
check $? "memory --method dense with an embedding model"
json_check "an embedding model the method does not use is named in a notice" '
m = doc["model"]
assert not m["used"], m
assert m["notice"] and "does not use them" in m["notice"], m'

# A 429 asking for an hour, with --timeout 5: an answer at once, not after the backoff cap on every attempt.
start=$(date +%s)
"$tool" summarize --db "$db" --room stationkit --last 20 --endpoint "http://127.0.0.1:$port/s/429long.cli/v1" \
  --model test-chat --timeout 5 --json >"$tmp/out" 2>"$tmp/err"
check $? "summarize against a server asking to wait an hour"
elapsed=$(( $(date +%s) - start ))
test "$elapsed" -lt 5
check $? "a Retry-After beyond --timeout 5 is not waited for (${elapsed} s)"
json_check "the notice says why the model was not used" '
notice = doc["summary"]["notice"]
assert "Retry-After" in notice and "timeout of 5 s" in notice, notice'

# A query vector with an infinite component is no query vector: the built-in retrieval answers, and says so.
"$tool" recall --db "$db" --room stationkit --query "when is the release" \
  --endpoint "http://127.0.0.1:$port/s/nonfinite/v1" --model test-chat --embed-model embed-16 --json \
  >"$tmp/out" 2>"$tmp/err"
check $? "recall with a server answering an infinite query vector"
json_check "the infinite vector is not used" '
m = doc["model"]
assert not m["used"], m
assert m["notice"] and "malformed embedding" in m["notice"], m
assert doc["memory"], doc'

# ask with a chat model: a short answer citing evidence ids; what the checks drop is said, the rest stays.
ask () {
  "$tool" ask --db "$db" --room stationkit --question "what do ana and bo think about the release?" \
    --endpoint "http://127.0.0.1:$port/s/$1/v1" --model test-chat --timeout "${2:-10}" --json \
    >"$tmp/out" 2>"$tmp/err"
}
ask ask.cli1
check $? "ask with a chat model"
json_check "the answer cites evidence only, its invalid sentences left out" '
a = doc["answer"]
evidence = {t["id"] for t in doc["memory"]} | {t["id"] for r in doc["rows"] for t in r["turns"]}
assert a and a["text"] and a["cited"], doc
assert set(a["cited"]) <= evidence, (a["cited"], evidence)
assert "ghost-id" not in a["cited"], a
for line in a["lines"]:
    assert line["person"] in (None, "ana", "bo", "chidi", "dara", "emeka", "ci-bot"), line
    assert "mallory" not in line["text"] and "someone else" not in line["text"], line
assert any(l["person"] is None and l["ids"] for l in a["lines"]), a
assert "left out" in doc["answer_notice"], doc["answer_notice"]
assert doc["model"]["used"] and doc["model"]["chat_calls"] == 1, doc["model"]'

for scenario in askwrongids.cli askunknownperson.cli askprose.cli; do
  ask $scenario
  check $? "ask against a model answering $scenario"
  json_check "$scenario: the evidence, with a notice" '
assert doc["answer"] is None, doc["answer"]
assert doc["answer_notice"].startswith("Model not used for the answer: "), doc["answer_notice"]
assert doc["rows"] and doc["memory"], doc'
done

ask slow.cli 1
check $? "ask against a model slower than --timeout"
json_check "a slow model: the evidence, with a notice" '
assert doc["answer"] is None and "Model not used for the answer" in doc["answer_notice"], doc'

ask think.cli
check $? "ask against a reasoning model"
json_check "the answer after a <think> block is used" '
assert doc["answer"] and doc["answer"]["cited"], doc'

"$tool" ask --db "$db" --room stationkit --question "what do ana and bo think about the release?" \
  --endpoint "http://127.0.0.1:$port/s/ask.cli2/v1" --model test-chat >"$tmp/out" 2>"$tmp/err"
check $? "ask, text output"
grep -q "^Answer:$" "$tmp/out" && grep -Eq '^  .* \[s[0-9]+' "$tmp/out" && grep -q "nothing on this\|^ana:" "$tmp/out"
check $? "the answer with its ids, then the evidence"

echo "1..$n"
[ "$failed" -eq 0 ]
