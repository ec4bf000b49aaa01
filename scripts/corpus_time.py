#!/usr/bin/env python3
"""Times the corpus kernels (corpus/build/manifest.json) with one or more weft binaries.

    python3 scripts/corpus_time.py OLD_WEFT NEW_WEFT [--repeat 3]

Each manifest entry runs `--repeat` times per binary, the binaries alternating per kernel;
the table (Markdown, to stdout) gives the total of `--stats` of the fastest run and the max
RSS of that run. Run it on an idle machine: the figures go to BENCHMARKS.md.
"""
import argparse
import json
import re
import subprocess
from pathlib import Path

from bench import ms

ROOT = Path(__file__).resolve().parent.parent


def fastest(weft, entry, repeat):
    """(total ms, max RSS MiB) of the fastest of `repeat` runs, or None."""
    best = None
    for _ in range(repeat):
        cmd = ["/usr/bin/time", "-f", "MAXRSS %M", weft, entry["ptx"]]
        if entry.get("kernel"):
            cmd += ["--kernel", entry["kernel"]]
        cmd += entry.get("args", []) + ["--stats"]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        out = p.stdout + p.stderr
        total = re.search(r"total ([\d.]+ m?s)", out)
        rss = re.search(r"MAXRSS (\d+)", out)
        if not total or not rss:
            return None
        t = ms(total.group(1))
        if best is None or t < best[0]:
            best = (t, int(rss.group(1)) // 1024)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("weft", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    manifest = json.loads((ROOT / "corpus" / "build" / "manifest.json").read_text())
    print("| kernel | " + " | ".join(f"{w} ms (MiB)" for w in a.weft) + " |")
    print("| --- |" + " ---: |" * len(a.weft))
    for entry in manifest["samples"]:
        cells = []
        for w in a.weft:
            r = fastest(w, entry, a.repeat)
            cells.append("-" if r is None else f"{r[0]:.0f} ({r[1]})")
        print(f"| `{entry['name']}` | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
