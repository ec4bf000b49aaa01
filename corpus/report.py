#!/usr/bin/env python3
"""Runs weft on every kernel of corpus/build/manifest.json and prints the README's table.

    cargo build --release -p weft && python3 corpus/report.py [path/to/weft] [--write-expected]

Each row: the kernel, weft's verdict (with the violation kinds or the first unverifiable
reason), its size (commands, dynamic barriers) and the wall time of the whole run.

With --write-expected it also rewrites corpus/expected.json, the verdict and violation kinds
of every kernel that the corpus test (crates/cli/tests/corpus.rs) holds each run to: after a
change of verdicts that corpus/README.md defends, not to make a failing test pass.
"""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def elide(text: str) -> str:
    """Shortens identifiers longer than 48 characters (mangled C++ names) for the table."""
    return re.sub(r"[\w$]{48,}", lambda m: m.group(0)[:24] + "…", text)


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--write-expected"]
    write_expected = len(args) != len(sys.argv) - 1
    weft = args[0] if args else str(ROOT / "target/release/weft")
    manifest = json.loads((ROOT / "corpus/build/manifest.json").read_text())
    expected = {}
    print("| kernel | verdict | commands | dynamic barriers | time |")
    print("| --- | --- | --- | --- | --- |")
    for entry in manifest["samples"]:
        cmd = [weft, entry["ptx"], "--format", "json", *entry["args"]]
        if entry.get("kernel"):
            cmd += ["--kernel", entry["kernel"]]
        start = time.perf_counter()
        run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        try:
            report = json.loads(run.stdout)
        except json.JSONDecodeError:
            print(f"| `{entry['name']}` | error (exit {run.returncode}): "
                  f"{run.stderr.strip()[:200]} | | | |")
            continue
        for kernel in report["kernels"]:
            expected[entry["name"]] = {
                "verdict": kernel["verdict"],
                "kinds": sorted({v["kind"] for v in kernel["violations"]}),
            }
            verdict = kernel["verdict"]
            if verdict == "violation":
                kinds = sorted({v["kind"] for v in kernel["violations"]})
                verdict += ": " + ", ".join(kinds)
            elif verdict == "unverifiable":
                reason = elide(kernel["unverifiable"][0]["reason"]).replace("|", "\\|")
                verdict += ": " + reason
            coverage = kernel.get("coverage")
            if coverage:
                # What the exploration of sizes covered, in a few words (the text report's
                # coverage line says which values).
                paths = coverage["paths"]
                many = "s" if paths != 1 else ""
                if kernel["verdict"] == "verified":
                    scope = "every value" if coverage["complete"] else "bounded"
                    verdict += f" ({scope}, {paths} path{many})"
                elif kernel["verdict"] == "violation" and coverage["failing_inputs"]:
                    found = ", ".join(f"{v['term']} = {v['value']}"
                                      for v in coverage["failing_inputs"])
                    verdict += f" (found with {elide(found)})"
            stats = kernel["stats"]
            print(f"| `{entry['name']}` | {verdict} | {stats['commands']:,} | "
                  f"{stats['dynamic_barriers']:,} | {seconds:.2f} s |")
    if write_expected:
        text = json.dumps({"kernels": expected}, indent=2, sort_keys=True) + "\n"
        (ROOT / "corpus/expected.json").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
