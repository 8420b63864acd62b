#!/usr/bin/env python3
"""Pool recall: does the candidate pool shown to the model hold the evidence of each annotated gap?

For the model path a catch-up retrieves a wide pool of candidate turns per gap and lets the model choose the
evidence from it, so what the model can find is bounded by the pool. This runs `catchup memory --json --pool N`
on the annotated dev windows of the shared benchmark (the material memory_recall.py reads) for each pool size N
and counts, over the annotated gaps:

  pool    the share whose evidence is in the lead-in (the turns just before the window, always in the memory)
          or in a pool shown to the model (the "pool" of any gap of the window)
  far     the same for far gaps (evidence beyond the budget's worth of turns before the window)
  memory  the share whose evidence is in the memory the tool returned (memory recall; with the test stand-in
          the selection is answered with nothing, so this is the built-in ranking's fallback)

and per window the distinct candidates shown and the tokens of the selection prompt (when the model was asked).
Gap detection is the model's when CATCHUP_ENDPOINT and CATCHUP_MODEL point at a server (for instance the
shared model_stand_in.py replaying recorded model answers), else the built-in detector's.

With --chunks-per-gap N the built-in ranking keeps N chunks per gap instead of budget / chunk size, so the
memory column compares the built-in path's own ranking over a wider pool.

usage: pool-recall.py --cli PATH/TO/catchup [--shared DIR] [--sizes 5,10,20,30,40] [--budget 1024]
                      [--chunks-per-gap N] [--method M]
"""
import argparse
import json
import os
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True, help="path to the catchup tool")
    ap.add_argument("--shared", default=os.path.join(os.getcwd(), "..", "shared"),
                    help="the shared benchmark material (default: ../shared)")
    ap.add_argument("--sizes", default="5,10,20,30,40")
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--method", default="remember")
    ap.add_argument("--chunks-per-gap", type=int, default=0,
                    help="chunks the built-in ranking keeps per gap (0: the tool's default)")
    a = ap.parse_args()

    sys.path.insert(0, os.path.join(a.shared, "bench"))
    import memory_recall as mr  # noqa: E402  (read from the shared folder at run time)

    ann = [os.path.join(a.shared, "bench", "dev")]
    every = mr.load_annotations(ann)
    wins = [w for w in every if w["gaps"]]
    convs = mr.load_transcripts(ann)
    tmp = tempfile.mkdtemp(prefix="pool-recall-")
    db = os.path.join(tmp, "history.db")
    files = []
    # every annotated conversation, as memory_recall.py imports them: term statistics span the database
    for c in sorted({w["conv"] for w in every}):
        path = os.path.join(tmp, c + ".jsonl")
        with open(path, "w") as f:
            for m in convs[c]:
                f.write(json.dumps(m, ensure_ascii=False) + "\n")
        files.append(path)
    mr.run([a.cli, "import", "--db", db, "--format", "jsonl"] + files)

    pos = {c: {m["id"]: i for i, m in enumerate(convs[c])} for c in convs}

    def is_far(w, g):
        turns, i0 = convs[w["conv"]], pos[w["conv"]][w["start"]]
        back, k = 0, i0
        while k > 0 and back < a.budget:
            k -= 1
            back += mr.ref_tokens(turns[k]["speaker"], turns[k]["text"])
        near = {turns[j]["id"] for j in range(k, i0)}
        return not any(e in near for e in g["evidence"])

    print(f"{'pool':>4} {'pool':>7} {'far':>7} {'memory':>7} {'mem far':>7} {'cand/win':>8} {'sel tok':>8} "
          f"{'max tok':>8} {'gaps/win':>8}")
    for size in [int(x) for x in a.sizes.split(",")]:
        n = hit = far_n = far_hit = mem_hit = mem_far = 0
        cands = gaps = 0
        sel_tokens = []
        for w in wins:
            out = mr.run([a.cli, "memory", "--db", db, "--room", w["conv"], "--window", f"{w['start']}..{w['end']}",
                          "--budget", str(a.budget), "--method", a.method, "--pool", str(size), "--json"]
                         + (["--chunks-per-gap", str(a.chunks_per_gap)] if a.chunks_per_gap else []))
            doc = json.loads(out)
            lead = {m["id"] for m in doc["memory"] if m.get("lead_in")}
            memory = {m["id"] for m in doc["memory"]}
            shown = set()
            for g in doc["gaps"]:
                shown.update(g.get("pool") or [])
            cands += len(shown)
            gaps += len(doc["gaps"])
            sel = (doc.get("model") or {}).get("selection_prompt_tokens")
            if sel:
                sel_tokens.append(sel)
            for g in w["gaps"]:
                ev = set(g["evidence"])
                found = bool(ev & (lead | shown))
                far = is_far(w, g)
                n += 1
                hit += found
                mem_hit += bool(ev & memory)
                if far:
                    far_n += 1
                    far_hit += found
                    mem_far += bool(ev & memory)
        mean_sel = f"{sum(sel_tokens) / len(sel_tokens):.0f}" if sel_tokens else "-"
        max_sel = f"{max(sel_tokens)}" if sel_tokens else "-"
        print(f"{size:>4} {hit / n:>7.3f} {far_hit / max(far_n, 1):>7.3f} {mem_hit / n:>7.3f} "
              f"{mem_far / max(far_n, 1):>7.3f} {cands / len(wins):>8.1f} {mean_sel:>8} {max_sel:>8} "
              f"{gaps / len(wins):>8.1f}")
    print(f"windows {len(wins)}, gaps {n} ({far_n} far)")


if __name__ == "__main__":
    main()
