#!/usr/bin/env python3
"""Mutation stress test of the weft binary (issue 15).

Generates mutants of every PTX file the repository has (samples, test fixtures, stress
inputs, and the real-world corpus in corpus/build when it was built), runs the weft binary on
each under a wall-clock limit and an address-space limit, and counts the runs that panic
(exit status 101), die of a signal (an abort on allocation failure included), or run out of
time. Any other exit status (0-3) is an answer.

    scripts/mutants.py --count 100000 --weft target/release/weft --jobs 2

Every failing mutant is kept under --keep (default target/mutants/failures) with its stderr,
and so is every answered one that took more than --keep-slow CPU seconds (as slow_N). Each
run's CPU time (user + system) and peak RSS are read from wait4; the summary gives the
slowest (wall and CPU) and the largest. The run is deterministic for a given --seed. The summary is printed as one JSON line at the
end (and every --progress mutants). Python standard library only.
"""

import argparse
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Numbers that find overflows, huge allocations and long loops.
INTERESTING = [
    "0", "1", "-1", "2", "3", "4", "31", "32", "33", "63", "64", "65", "127", "128", "255",
    "256", "1023", "1024", "1025", "2048", "4095", "4096", "65535", "65536", "1048576",
    "16777216", "1073741824", "2147483647", "2147483648", "-2147483648", "4294967295",
    "4294967296", "9223372036854775807", "18446744073709551615", "18446744073709551616",
    "0xffffffff", "0x80000000", "0xffffffffffffffff", "0x7fffffffffffffff",
    "99999999999999999999999999", "0f7F800000", "0fFFFFFFFF", "0d7FF0000000000000",
]
NON_ASCII = ["é", "€", "\u200b", "\ufeff", "𝔘", "\u0301", "ß", "\t", "\r", "\x00", "\x7f"]
SNIPPETS = [
    "bar.sync 0;", "bar.sync 1, 32;", "bar.arrive 0, 64;", "bar.sync %r1;", "exit;", "ret;",
    "trap;", "membar.cta;", "bar.warp.sync -1;", "@%p1 bra $L__BB0_1;", "{", "}",
    "st.shared.u32 [%r1], %r1;", "ld.shared.u32 %r1, [%r1];", ".reg .b32 %r<100000>;",
    ".shared .align 4 .b8 s[1073741824];", ".local .align 4 .b8 l[1048576];",
    "mbarrier.init.shared.b64 [%r1], 1;", "mbarrier.arrive.shared.b64 %rd1, [%r1];",
    "shfl.sync.bfly.b32 %r1, %r1, 1, 31, -1;", "vote.sync.all.pred %p1, %p1, -1;",
    "call.uni (retval0), f, (param0);", ".loc 1 999999999 999999999", ".file 1 \"/dev/zero\"",
    ".maxnreg 0", ".reqntid 1024, 1, 64", ".reqntid 0, 0, 0", "//", "/*", "\"", ";", ",",
]
TOKEN = re.compile(r"[A-Za-z_$%.][\w$.%]*|0[xXfFdD][0-9A-Fa-f]+|\d+|\S")
NUMBER = re.compile(r"(?<![\w$%.])-?(?:0[xX][0-9A-Fa-f]+|\d+)(?![\w.])")


def seeds(include_corpus, max_bytes):
    files = []
    for base in ["samples", "crates", "corpus/build"]:
        if base == "corpus/build" and not include_corpus:
            continue
        for path in sorted((ROOT / base).rglob("*.ptx")):
            if "target" in path.parts or "mutants" in path.parts:
                continue
            try:
                if path.stat().st_size > max_bytes:
                    continue
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            files.append((str(path.relative_to(ROOT)), text))
    return files


def mutate_once(rng, text, others):
    lines = text.split("\n")
    op = rng.randrange(14)
    if op == 0 and lines:  # delete a line
        del lines[rng.randrange(len(lines))]
    elif op == 1 and lines:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif op == 2 and len(lines) > 1:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op in (3, 4, 5):  # replace a number with an interesting one
        matches = list(NUMBER.finditer(text))
        if matches:
            m = rng.choice(matches)
            return text[: m.start()] + rng.choice(INTERESTING) + text[m.end():]
    elif op == 6:  # replace a token with another token of the file
        tokens = list(TOKEN.finditer(text))
        if len(tokens) > 1:
            m = rng.choice(tokens)
            other = rng.choice(tokens).group(0)
            return text[: m.start()] + other + text[m.end():]
    elif op == 7:  # insert a snippet on a new line
        i = rng.randrange(len(lines) + 1)
        lines.insert(i, "\t" + rng.choice(SNIPPETS))
    elif op == 8 and text:  # truncate
        return text[: rng.randrange(len(text))]
    elif op == 9 and text:  # insert a non-ASCII or control character
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(NON_ASCII) + text[i:]
    elif op == 10 and text:  # flip one character to a random printable one
        i = rng.randrange(len(text))
        return text[:i] + chr(rng.randrange(32, 127)) + text[i + 1:]
    elif op == 11 and others:  # splice lines of another seed
        other = rng.choice(others).split("\n")
        if other:
            a = rng.randrange(len(other))
            b = min(len(other), a + rng.randrange(1, 40))
            i = rng.randrange(len(lines) + 1)
            lines[i:i] = other[a:b]
    elif op == 12 and lines:  # repeat a block many times
        a = rng.randrange(len(lines))
        b = min(len(lines), a + rng.randrange(1, 8))
        lines[b:b] = lines[a:b] * rng.choice([2, 10, 100])
    elif op == 13:  # delete a range of characters
        if text:
            a = rng.randrange(len(text))
            return text[:a] + text[a + rng.randrange(1, 200):]
    return "\n".join(lines)


def mutant(rng, text, others):
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5, 8])):
        text = mutate_once(rng, text, others)
    return text


def limit(memory_bytes, cpu_seconds):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if cpu_seconds:
            # SIGXCPU at the soft limit: a run over its CPU time is a timeout.
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.nice(19)
    return apply


def run_one(weft, path, args, seconds, memory_bytes, cpu_clock):
    """Runs weft on `path`; returns its exit code (negative: a signal), whether it timed
    out, its wall-clock seconds, its CPU seconds (user + system), its peak resident set
    (KiB) and its stderr."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [weft, *args, str(path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=limit(memory_bytes, int(seconds) if cpu_clock else 0), cwd=path.parent,
    )
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stderr.read()))
    reader.start()
    # With --clock cpu the CPU limit decides; the wall clock only catches a blocked run.
    deadline = start + (seconds * 10 if cpu_clock else seconds)
    killed = False
    while True:
        # wait4 (not Popen.wait) to read the child's own CPU time and peak RSS.
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline and not killed:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.005)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    proc.stderr.close()
    code = proc.returncode
    timed_out = killed or (cpu_clock and code in (-signal.SIGXCPU, -signal.SIGKILL))
    cpu = usage.ru_utime + usage.ru_stime
    return code, timed_out, time.monotonic() - start, cpu, usage.ru_maxrss, b"".join(chunks)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per run")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="what --timeout limits: wall-clock time, or CPU time (for a loaded "
                         "machine; ten times the limit in wall-clock time still ends a run)")
    ap.add_argument("--memory", type=int, default=4096, help="MiB of address space per run")
    ap.add_argument("--no-corpus", action="store_true", help="leave out corpus/build")
    ap.add_argument("--max-seed-bytes", type=int, default=4 << 20)
    ap.add_argument("--work", default=str(ROOT / "target/mutants/work"))
    ap.add_argument("--keep", default=str(ROOT / "target/mutants/failures"))
    ap.add_argument("--write", help="only write COUNT mutants into this directory, run nothing")
    ap.add_argument("--progress", type=int, default=1000)
    ap.add_argument("--keep-slow", type=float, default=5.0,
                    help="also keep (as slow_N) every answered mutant that took more CPU "
                         "seconds than this")
    ap.add_argument("--args", default="--format json -j 1",
                    help="weft arguments before the file")
    opts = ap.parse_args()

    corpus = seeds(not opts.no_corpus, opts.max_seed_bytes)
    if not corpus:
        sys.exit("no seed PTX files found")
    texts = [t for _, t in corpus]
    rng = random.Random(opts.seed)
    # Small seeds are cheap: draw them more often than the big corpus kernels.
    weights = [1.0 if len(t) < 200_000 else 0.1 for t in texts]

    if opts.write:
        out = Path(opts.write)
        out.mkdir(parents=True, exist_ok=True)
        for n in range(opts.count):
            name, text = rng.choices(corpus, weights)[0]
            body = mutant(rng, text, texts)
            header = f"// mutant {n} of {name} (scripts/mutants.py --seed {opts.seed})\n"
            (out / f"mutant_{n:04}.ptx").write_text(header + body, encoding="utf-8")
        return

    work, keep = Path(opts.work), Path(opts.keep)
    work.mkdir(parents=True, exist_ok=True)
    keep.mkdir(parents=True, exist_ok=True)
    args = opts.args.split()
    memory = opts.memory << 20
    stats = {"mutants": 0, "answers": {}, "panics": 0, "signals": 0, "timeouts": 0,
             "slowest_s": 0.0, "slowest_cpu_s": 0.0, "peak_rss_mib": 0, "slow": 0,
             "seconds": 0.0, "seeds": len(corpus), "clock": opts.clock}
    begun = time.monotonic()

    def job(n):
        local = random.Random(opts.seed * 1_000_003 + n)
        name, text = local.choices(corpus, weights)[0]
        body = mutant(local, text, texts)
        path = work / f"m{threading.get_ident()}.ptx"
        path.write_text(body, encoding="utf-8")
        code, timed_out, seconds, cpu, rss, stderr = run_one(
            opts.weft, path, args, opts.timeout, memory, opts.clock == "cpu")
        return n, name, body, code, timed_out, seconds, cpu, rss, stderr

    def record(result):
        n, name, body, code, timed_out, seconds, cpu, rss, stderr = result
        stats["mutants"] += 1
        stats["slowest_s"] = max(stats["slowest_s"], round(seconds, 3))
        if cpu > stats["slowest_cpu_s"]:
            stats["slowest_cpu_s"] = round(cpu, 3)
            stats["slowest_mutant"] = f"{n} of {name}"
        stats["peak_rss_mib"] = max(stats["peak_rss_mib"], rss // 1024)
        kind = None
        if timed_out:
            stats["timeouts"] += 1
            kind = "timeout"
        elif code == 101 or b"panicked" in stderr:
            stats["panics"] += 1
            kind = "panic"
        elif code < 0:
            stats["signals"] += 1
            kind = f"signal{-code}"
        else:
            stats["answers"][str(code)] = stats["answers"].get(str(code), 0) + 1
            if cpu > opts.keep_slow:
                stats["slow"] += 1
                kind = "slow"
        if kind:
            (keep / f"{kind}_{n}.ptx").write_text(body, encoding="utf-8")
            (keep / f"{kind}_{n}.txt").write_bytes(
                f"seed file: {name}\nexit: {code}\ncpu: {cpu:.2f} s\nwall: {seconds:.2f} s\n"
                f"peak rss: {rss // 1024} MiB\n".encode() + stderr[-20000:])

    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        # Submit in windows so memory stays flat for 10^5 mutants.
        n = 0
        while n < opts.count:
            batch = range(n, min(opts.count, n + 64 * opts.jobs))
            for result in pool.map(job, batch):
                record(result)
                if stats["mutants"] % opts.progress == 0:
                    stats["seconds"] = round(time.monotonic() - begun, 1)
                    print(json.dumps(stats), flush=True)
            n = batch.stop
    stats["seconds"] = round(time.monotonic() - begun, 1)
    print(json.dumps(stats), flush=True)
    sys.exit(1 if stats["panics"] or stats["signals"] or stats["timeouts"] else 0)


if __name__ == "__main__":
    main()
