#!/usr/bin/env python3
"""Checks that a change to weft leaves every report unchanged: runs one weft binary over every
sample (samples/manifest.json), every built corpus kernel (corpus/build/manifest.json) and the
generated kernels of scripts/bench.py at their smaller sizes, with `--format json -j 1`, and
writes the reports with their timings removed to one JSON file; `--diff A B` compares two such
files.

    python3 scripts/same_reports.py run target/release/weft /tmp/before.json
    python3 scripts/same_reports.py run target/release/weft /tmp/after.json
    python3 scripts/same_reports.py diff /tmp/before.json /tmp/after.json

Copy the binary somewhere first when the same checkout builds the other one. A speed change
that only reorganizes work must give "0 differ"; a verdict change must be defended
(corpus/README.md).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "scripts" / "gen_ptx.py"

# Generated kernels: (name, generator arguments, weft arguments); sizes that run in seconds.
GENERATED = [
    ("gen-cudadma-64", ["cudadma", "--trips", "64"], []),
    ("gen-cudadma-depth4-512", ["cudadma", "--compute-warps", "8", "--depth", "4", "--trips", "512", "--elems", "2"], []),
    ("gen-cudadma-4+28", ["cudadma", "--dma-warps", "4", "--compute-warps", "28", "--trips", "64", "--elems", "1", "--work", "2"], []),
    ("gen-singe-100", ["singe", "--phases", "100"], []),
    ("gen-singe-warp-sync", ["singe", "--warps", "16", "--phases", "100", "--no-warp-barrier"], ["--warp-sync"]),
    ("gen-singe-broadcasts", ["singe", "--warps", "4", "--phases", "4", "--broadcasts", "8"], []),
    ("gen-singe-shuffles", ["singe", "--phases", "50", "--shuffles", "5"], []),
]


def scrub(value):
    """The report without wall-clock figures."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in ("seconds", "time", "timings")}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def entries(tmp):
    for manifest in (ROOT / "samples" / "manifest.json", ROOT / "corpus" / "build" / "manifest.json"):
        if not manifest.exists():
            print(f"missing {manifest.relative_to(ROOT)}: its kernels are not compared", file=sys.stderr)
            continue
        for e in json.loads(manifest.read_text())["samples"]:
            yield e["name"], [e["ptx"]] + (["--kernel", e["kernel"]] if e.get("kernel") else []) + e.get("args", [])
    for name, gen, args in GENERATED:
        ptx = Path(tmp) / f"{name}.ptx"
        with open(ptx, "w") as f:
            subprocess.run([sys.executable, GEN, *gen], stdout=f, check=True)
        yield name, [str(ptx)] + args


def run_one(weft, name, args):
    p = subprocess.run([weft, *args, "--format", "json", "-j", "1"], capture_output=True, text=True, cwd=ROOT)
    try:
        report = scrub(json.loads(p.stdout))
        # The generated kernels lie in a fresh temporary directory per run: their file name
        # without it.
        for kernel in report.get("kernels", []):
            kernel["file"] = Path(kernel.get("file", "")).name
    except json.JSONDecodeError:
        report = {"stdout": p.stdout, "stderr": p.stderr}
    return name, {"exit": p.returncode, "report": report}


def run(weft, out, jobs):
    weft = str(Path(weft).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        todo = list(entries(tmp))
        with ThreadPoolExecutor(jobs) as pool:
            results = dict(pool.map(lambda e: run_one(weft, *e), todo))
    Path(out).write_text(json.dumps(results, indent=1, sort_keys=True))
    print(f"{len(results)} runs written to {out}")


def diff(a, b):
    a, b = json.loads(Path(a).read_text()), json.loads(Path(b).read_text())
    names = sorted(set(a) | set(b))
    differ = [n for n in names if a.get(n) != b.get(n)]
    for n in differ:
        va, vb = a.get(n), b.get(n)
        short = lambda v: None if v is None else (v["exit"], [k.get("verdict") for k in v["report"].get("kernels", [])])
        print(f"{n}: {short(va)} -> {short(vb)}")
    print(f"{len(differ)} differ of {len(names)}")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("weft")
    r.add_argument("out")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    d = sub.add_parser("diff")
    d.add_argument("a")
    d.add_argument("b")
    a = ap.parse_args()
    if a.cmd == "run":
        run(a.weft, a.out, a.jobs)
    else:
        sys.exit(diff(a.a, a.b))


if __name__ == "__main__":
    main()
