#!/usr/bin/env python3
"""Times the release `weft` on corpus kernels whose problem sizes are explored instead of
fixed with --param (docs/semantics.md §6.5), for BENCHMARKS.md.

    cargo build --release -p weft
    python3 scripts/bench_sizes.py [--weft target/release/weft] [--repeat 5] [--manifest M]

Per kernel of the corpus manifest (corpus/build/manifest.json) whose arguments fix no
problem size: the verdict, the paths explored, the --max-trips bound, the values not
explored, and the best and median wall-clock time of --repeat runs with `-j 1` (user + sys
CPU time of the best run from os.wait4). Record the machine, its load and the date with the
table.
"""
import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(weft, sample):
    cmd = [weft, "-j", "1", sample["ptx"], "--kernel", sample["kernel"], "--format", "json",
           *sample["args"]]
    start = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, _, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--manifest", default=str(ROOT / "corpus/build/manifest.json"))
    ap.add_argument("--only", default="", help="comma-separated sample names")
    args = ap.parse_args()
    samples = json.load(open(args.manifest))["samples"]
    only = set(filter(None, args.only.split(",")))
    print("| kernel | verdict | paths | coverage | best | median | CPU (best) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for s in samples:
        if only and s["name"] not in only:
            continue
        runs = [run(args.weft, s) for _ in range(args.repeat)]
        k = runs[0][2]["kernels"][0]
        c = k.get("coverage")
        if c is None:
            continue
        walls = sorted(r[0] for r in runs)
        best = min(runs, key=lambda r: r[0])
        if c.get("inputs"):
            i = c["inputs"]
            skipped = (f"verified only for {i['term']} = "
                       + ", ".join(f"{a}..={b}" for a, b in i["verified"])
                       + f" (checked up to {i['checked_up_to']})")
        else:
            skipped = "; ".join(
                f"{v['term']} in " + ", ".join(f"{a}..={b}" for a, b in v["not_explored"])
                for v in c["variables"] if v["not_explored"])
        print(f"| `{s['name']}` | {k['verdict']} | {c['paths']} (--max-trips {c['max_trips']}) "
              f"| {skipped or 'none'} | {walls[0]:.2f} s | {statistics.median(walls):.2f} s "
              f"| {best[1]:.2f} s |")


if __name__ == "__main__":
    main()
