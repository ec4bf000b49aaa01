#!/usr/bin/env python3
"""Writes scripts/hw/launches.txt: one hardware launch per sample kernel of the manifest.

Each line is `NAME PTX KERNEL BX BY BZ SPEC...` for scripts/hw/launch.cu.  The CTA shape is
the one weft analyses (read from `weft --format json`), pointer parameters get fresh zeroed
buffers, integer parameters the value below, and tensor-map parameters the maps the sample's
source describes (TENSOR_MAPS).  Kernels that cannot run on an H200 (sm_100a) or whose source
does not say what they are launched with are listed on stderr with the reason.

Usage: scripts/hw/prepare.py [path/to/weft]
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEFT = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/release/weft")

# An integer parameter's value: 48 trips reach the late bug of samples/sizes/late_bug.cu
# (trip 42) and every other sample's loops run a few times.
INT_VALUE = 48
FLOAT_VALUE = 4.0

# Tensor maps, per kernel and parameter index, from each sample's source comment.
_F32_TILES = "t1:4:4096:32"  # 1-D fp32, 32-element (128-byte) boxes at x = 32 i
_WGMMA_A = "t1:8:4096:256"  # 2048-byte boxes (64x16 fp16 as 256 8-byte elements)
_WGMMA_B = "t1:8:4096:32"  # 256-byte boxes (8x16 fp16)
_SWIZZLED = "t2:2:256:64:64:64:128"  # 64x64 bf16 boxes, 128-byte swizzle, 4 k-blocks
TENSOR_MAPS = {
    "tma_copies_before_expect_tx": [_F32_TILES],
    "tma_copies_across_barrier": [_F32_TILES],
    "tma_store_ok": [_F32_TILES],
    "tma_store_overwrite": [_F32_TILES],
    "elect_producer": [_F32_TILES],
    "elect_producer_lane_write": [_F32_TILES],
    "wgmma_consumer_release": [_WGMMA_A, _WGMMA_B],
    "wgmma_skipped_wait": [_WGMMA_A, _WGMMA_B],
    "wgmma_skipped_mma": [_WGMMA_A, _WGMMA_B],
    "wgmma_pipeline_all_release": [_SWIZZLED, _SWIZZLED],
    "wgmma_pipeline_elected_release": [_SWIZZLED, _SWIZZLED],
    "wgmma_pipeline_early_release": [_SWIZZLED, _SWIZZLED],
}

PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+(?:\.ptr\s+(?:\.\w+\s+)*)?(\w+)(\[\d+\])?")


def entry_params(ptx: str, kernel: str):
    start = ptx.index(f".entry {kernel}(")
    end = ptx.index(")", start)
    return PARAM.findall(ptx[start:end])


def plain_name(mangled: str) -> str:
    m = re.match(r"_Z(\d+)(\w+)", mangled)
    return m.group(2)[: int(m.group(1))] if m else mangled


def main():
    samples = json.loads((ROOT / "samples/manifest.json").read_text())["samples"]
    seen = {}
    for s in samples:
        seen.setdefault((s["ptx"], s["kernel"]), []).append(s)
    lines = []
    for (ptx_path, kernel), entries in seen.items():
        first = entries[0]
        names = ",".join(e["name"] for e in entries)
        ptx = (ROOT / ptx_path).read_text()
        if kernel is None:
            print(f"skip {names}: a parser test with several entries, no source", file=sys.stderr)
            continue
        if ".target sm_100" in ptx:
            print(f"skip {names}: sm_100a (tcgen05) does not run on an H200", file=sys.stderr)
            continue
        if ".extern .shared" in ptx:
            print(f"skip {names}: dynamic shared memory of an unstated size", file=sys.stderr)
            continue
        args = [a for a in first["args"] if a not in ("--warp-sync", "--strict")]
        out = subprocess.run([WEFT, str(ROOT / ptx_path), "--kernel", kernel, "--format", "json", *args],
                             capture_output=True, text=True)
        shape = json.loads(out.stdout)["kernels"][0]["cta_shape"]
        maps = list(TENSOR_MAPS.get(plain_name(kernel), []))
        specs = []
        for ty, _name, array in entry_params(ptx, kernel):
            if array:
                if not maps:
                    raise SystemExit(f"{kernel}: a by-value parameter with no tensor map listed")
                specs.append(maps.pop(0))
            elif ty in ("u64", "b64", "s64"):
                specs.append("p")
            elif ty in ("u32", "s32", "b32"):
                specs.append(f"i4:{INT_VALUE}")
            elif ty == "f32":
                specs.append(f"f4:{FLOAT_VALUE}")
            else:
                raise SystemExit(f"{kernel}: parameter type .{ty} has no spec")
        lines.append(" ".join([names, ptx_path, kernel, *map(str, shape), *specs]))
    (ROOT / "scripts/hw/launches.txt").write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} launches", file=sys.stderr)


if __name__ == "__main__":
    main()
