#!/usr/bin/env python3
"""Whole-process speed of one catch-up's memory: `catchup memory ... --json` run as a program, start to exit.

    python3 bench/process-speed.py --cli BUILD/catchup --db WORK/history-174000.db [--runs 20]
                                   [--method remember] [--window 60] [--room bench] [--warmup 3]

The database is one that `bench/bench-speed --workdir WORK` leaves (history-SIZE.db, room "bench"); the
window is its last --window messages, as bench-speed takes them. Prints the median and 90th percentile of the
wall time, the median CPU time (user + system of the child) and the load average before and after: on a busy
machine wall time also measures the neighbours, CPU time much less so.
"""

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import time


def window_of(db, room, last):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "select m.uid from messages m join rooms r on r.id = m.room where r.name = ? "
        "order by m.ts desc, m.row desc limit ?", (room, last)).fetchall()
    con.close()
    if not rows:
        sys.exit(f"process-speed: no messages in room {room!r} of {db}")
    return f"{rows[-1][0]}..{rows[0][0]}"


def one_run(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"process-speed: {' '.join(argv)} failed: {done.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True, help="the catchup tool")
    ap.add_argument("--db", required=True, help="a history database left by bench-speed --workdir")
    ap.add_argument("--room", default="bench")
    ap.add_argument("--window", type=int, default=60, help="the last N messages (default 60)")
    ap.add_argument("--method", default="remember")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3, help="runs not counted (page cache, default 3)")
    args = ap.parse_args()

    window = window_of(args.db, args.room, args.window)
    argv = [args.cli, "memory", "--db", args.db, "--room", args.room, "--window", window,
            "--method", args.method, "--json"]
    load_before = os.getloadavg()
    for _ in range(args.warmup):
        one_run(argv)
    runs = [one_run(argv) for _ in range(args.runs)]
    load_after = os.getloadavg()
    walls = sorted(r[0] for r in runs)
    cpus = [r[1] for r in runs]
    p90 = walls[min(len(walls) - 1, int(round(0.9 * (len(walls) - 1))))]
    print(" ".join(argv))
    print(f"runs {len(runs)}  wall median {statistics.median(walls):.1f} ms  p90 {p90:.1f} ms  "
          f"min {walls[0]:.1f} ms  cpu median {statistics.median(cpus):.1f} ms  "
          f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}")


if __name__ == "__main__":
    main()
