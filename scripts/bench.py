#!/usr/bin/env python3
"""Runs the release `weft --stats` over generated kernels of growing size (scripts/gen_ptx.py)
and prints a Markdown table for BENCHMARKS.md; with --svg FILE also a plot of total time and
peak memory against commands (hand-written SVG, no plotting library needed).

    cargo build --release -p weft
    python3 scripts/bench.py [--weft target/release/weft] [--quick] [--svg docs/bench.svg]

Per kernel: commands, thread-instructions, the stage times weft reports (parse, emulate,
graph, race), thread-instructions per second of emulation, race tests per second, the naive
race pairs (every pair of accesses to a word by two threads, one a write), the peak
memory weft reports and the process's maximum resident set (GNU time). Best of --repeat runs
(by total time). Times are wall-clock on whatever machine runs it: record the machine and
date with the table.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "scripts" / "gen_ptx.py"

# (label, generator arguments, weft arguments)
SIZES = [
    ("cudadma 2+4 warps, depth 2, 64 trips", ["cudadma", "--trips", "64"], []),
    ("cudadma 2+4 warps, depth 2, 1024 trips", ["cudadma", "--trips", "1024"], []),
    ("cudadma 2+8 warps, depth 4, 4096 trips (saxpy_single scale)",
     ["cudadma", "--compute-warps", "8", "--depth", "4", "--trips", "4096", "--elems", "2"], []),
    ("cudadma 4+28 warps, depth 2, 4096 trips",
     ["cudadma", "--dma-warps", "4", "--compute-warps", "28", "--trips", "4096", "--elems", "1", "--work", "2"], []),
    ("singe 8 warps, 100 phases", ["singe", "--phases", "100"], []),
    ("singe 8 warps, 2000 phases", ["singe", "--phases", "2000"], []),
    ("singe 16 warps, 2000 phases, warp-synchronous (--warp-sync)",
     ["singe", "--warps", "16", "--phases", "2000", "--no-warp-barrier"], ["--warp-sync"]),
    # The WEFT paper's worst case, hept_visc_fermi (416 threads, 128 dynamic barriers,
    # 168 billion race tests): Fermi warp-synchronous broadcasts through one shared word
    # per warp, about 172 billion naive race pairs.
    ("singe 13 warps, 128 phases, 160 broadcasts, warp-synchronous (hept_visc_fermi shape)",
     ["singe", "--warps", "13", "--phases", "128", "--broadcasts", "160", "--straight", "0",
      "--shuffles", "0", "--no-warp-barrier"], ["--warp-sync"]),
    # 1024 threads x ~300,000 instructions: past the default CTA budget (8 x 10^7), and
    # its 32.8 million commands and 260,000 dynamic barriers past the default memory budget
    # (it peaks at 4 GB).
    ("singe 32 warps, 4000 phases, shuffle-heavy",
     ["singe", "--warps", "32", "--phases", "4000", "--shuffles", "20", "--straight", "4"],
     ["--max-steps", "100000000", "--max-memory", "8G"]),
]
QUICK = SIZES[:1] + SIZES[4:5]

# Each time is in ms, or in s from 1,000 ms on.
T = r"([\d.]+ m?s)"
STATS = re.compile(
    r"commands (\d+), dynamic barriers (\d+).*race tests (\d+) \(naive pairs (\d+)\), instructions (\d+)\s+"
    rf"time: parse {T}, emulate {T}, graph {T}, race {T}, total {T}; "
    r"peak memory ([\d.]+) MiB", re.S)


def ms(t):
    value, unit = t.split()
    return float(value) * (1 if unit == "ms" else 1000)


def run(weft, ptx, extra):
    cmd = ["/usr/bin/time", "-f", "MAXRSS %M", weft, str(ptx), "--stats", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = STATS.search(p.stdout)
    rss = re.search(r"MAXRSS (\d+)", p.stderr)
    if not m or "verified" not in p.stdout:
        sys.exit(f"unexpected weft output for {ptx}:\n{p.stdout}\n{p.stderr}")
    g = m.groups()
    return {"commands": int(g[0]), "barriers": int(g[1]), "tests": int(g[2]), "pairs": int(g[3]),
            "insts": int(g[4]), "parse": ms(g[5]), "emulate": ms(g[6]), "graph": ms(g[7]),
            "race": ms(g[8]), "total": ms(g[9]), "peak": float(g[10]),
            "rss": int(rss.group(1)) / 1024 if rss else float("nan")}


def svg(rows, path):
    w, h, pad = 640, 360, 60
    xs = [r["commands"] for r in rows]
    import math
    lx = [math.log10(x) for x in xs]
    x0, x1 = min(lx), max(lx) + 1e-9

    def px(x):
        return pad + (math.log10(x) - x0) / (x1 - x0) * (w - 2 * pad)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w/2}" y="16" text-anchor="middle">weft: total time (s, blue) and peak RSS (MiB, red) against commands (log-log)</text>']
    for key, colour, scale in (("total", "#1f77b4", 1e-3), ("rss", "#d62728", 1.0)):
        ys = [max(r[key] * scale, 1e-4) for r in rows]
        ly = [math.log10(y) for y in ys]
        y0, y1 = min(ly), max(ly) + 1e-9
        pts = sorted(zip(xs, ys))
        coords = [(px(x), h - pad - (math.log10(y) - y0) / (y1 - y0) * (h - 2 * pad)) for x, y in pts]
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="' +
                   " ".join(f"{a:.1f},{b:.1f}" for a, b in coords) + '"/>')
        for (a, b), (x, y) in zip(coords, pts):
            out.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{colour}"/>')
            out.append(f'<text x="{a + 4:.1f}" y="{b - 4:.1f}" fill="{colour}">{y:.3g}</text>')
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{h - pad + 16}" text-anchor="middle">{x:.2g}</text>')
    out.append(f'<text x="{w/2}" y="{h - 12}" text-anchor="middle">commands</text></svg>')
    Path(path).write_text("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    ap.add_argument("--quick", action="store_true", help="two small kernels only")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--svg")
    a = ap.parse_args()
    rows = []
    print("| kernel | commands | thread-insts | parse ms | emulate ms | graph ms | race ms | total ms "
          "| M insts/s | M race tests/s | naive pairs (G) | peak MiB (weft) | max RSS MiB | load |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for label, gen, extra in (QUICK if a.quick else SIZES):
            ptx = Path(tmp) / "k.ptx"
            ptx.write_text(subprocess.run([sys.executable, str(GEN), *gen], capture_output=True,
                                          text=True, check=True).stdout)
            # The machine may be shared: the 1-minute load average when the runs start.
            load = os.getloadavg()[0]
            best = min((run(a.weft, ptx, extra) for _ in range(a.repeat)), key=lambda r: r["total"])
            best["label"] = label
            rows.append(best)
            r = best
            print(f"| {label} | {r['commands']:,} | {r['insts']:,} | {r['parse']:.1f} | {r['emulate']:.1f} "
                  f"| {r['graph']:.1f} | {r['race']:.1f} | {r['total']:.1f} "
                  f"| {r['insts'] / max(r['emulate'], 1e-6) / 1e3:.1f} "
                  f"| {r['tests'] / max(r['race'], 1e-6) / 1e3:.1f} | {r['pairs'] / 1e9:.1f} | {r['peak']:.1f} | {r['rss']:.1f} | {load:.1f} |",
                  flush=True)
    if a.svg:
        svg(rows, a.svg)


if __name__ == "__main__":
    main()
