#!/usr/bin/env python3
"""Generates synthetic PTX kernels with size knobs, in the shapes of the WEFT paper's suites,
for benchmarks (BENCHMARKS.md, scripts/bench.sh). Every generated kernel is correct
(weft must say `verified`), so the whole pipeline runs: emulation, graph and race check.

    python3 scripts/gen_ptx.py cudadma --dma-warps 2 --compute-warps 4 --depth 2 \
        --trips 64 --elems 4 --work 8 > k.ptx
    python3 scripts/gen_ptx.py singe --warps 8 --phases 100 --straight 16 --shuffles 5 > k.ptx

Shapes:
- cudadma: CudaDMA producer/consumer. D DMA warps fill B shared buffers for C compute warps
  over T iterations. Buffer b uses named barrier 1+2b ("empty": compute arrives, DMA syncs)
  and 2+2b ("full": DMA arrives, compute syncs), all (D+C)*32 threads counted, ids computed
  from the loop counter. Per iteration each compute thread reads E words and does W integer
  operations per word; the DMA threads write the buffer (E*32*C words).
- singe: Singe-like warp-synchronous code. W warps, P phases (a loop). Per phase every lane
  does S straight-line integer operations, K butterfly `shfl.sync` steps, a warp-synchronous
  exchange through shared memory (write own slot, `bar.warp.sync` unless --no-warp-barrier,
  read the neighbour lane's slot), writes its warp's region of a double-buffered shared array,
  and the CTA meets at a named barrier whose id rotates through 1..15 (recycled every 15
  phases); each warp then reads the next warp's region. --no-warp-barrier needs
  `weft --warp-sync` to verify (pre-Volta lock-step code). With --broadcasts R, each phase
  also has R broadcast rounds, the Fermi Singe kernels' exchange of constants through the
  same shared words (hept_visc_fermi's 168 billion race tests): in round j lane j % 32 of
  each warp stores its accumulator to its warp's one broadcast word and every lane of the
  warp loads it (`bar.warp.sync` after each unless --no-warp-barrier). Every word is
  accessed by 32 threads about 33 * R * P times: about 32 * (R * P)^2 naive race pairs per
  warp.

`--print-size` writes the CTA size to stderr.
"""
import argparse
import sys


def header(threads, shared_bytes):
    return [
        ".version 8.0",
        ".target sm_80",
        ".address_size 64",
        "",
        ".visible .entry gen(.param .u64 out)",
        f".reqntid {threads}, 1, 1",
        "{",
        "    .reg .b32 %r<64>;",
        "    .reg .pred %p<8>;",
        "    .reg .b64 %rd<4>;",
        f"    .shared .align 16 .b8 smem[{shared_bytes}];",
    ]


# Every thread stores its accumulator %r20 to out[tid] (keeps the work observable) and ends.
STORE_RESULT = [
    "    ld.param.u64 %rd1, [out];",
    "    cvta.to.global.u64 %rd1, %rd1;",
    "    mul.wide.u32 %rd2, %r1, 4;",
    "    add.s64 %rd1, %rd1, %rd2;",
    "    st.global.u32 [%rd1], %r20;",
    "    ret;",
    "}",
]


def work(lines, acc, n, seed_reg):
    """n integer operations on register `acc`, mixing in `seed_reg`."""
    ops = ["mad.lo.s32 {a}, {a}, 17, {s};", "xor.b32 {a}, {a}, 0x55aa;",
           "shr.u32 %r40, {a}, 3;\n    add.s32 {a}, {a}, %r40;", "mul.lo.s32 {a}, {a}, 3;"]
    for i in range(n):
        lines.append("    " + ops[i % len(ops)].format(a=acc, s=seed_reg))


def cudadma(a):
    d, c, b, t, e, w = a.dma_warps, a.compute_warps, a.depth, a.trips, a.elems, a.work
    if not 1 <= b <= 7:
        sys.exit("--depth must be 1..7 (two named barriers per buffer, ids 1..15)")
    nd, nc = 32 * d, 32 * c
    words = nc * e
    if words % nd:
        sys.exit("elems*32*compute-warps must be a multiple of 32*dma-warps")
    per_dma = words // nd
    buf_bytes = 4 * words
    n = nd + nc
    lines = header(n, buf_bytes * b)
    lines += [
        "    mov.u32 %r1, %tid.x;",
        "    mov.u32 %r2, smem;",
        "    mov.u32 %r3, 0;                 // iteration",
        f"    setp.ge.u32 %p1, %r1, {nd};",
        "    @%p1 bra COMPUTE;",
        "    shl.b32 %r4, %r1, 2;            // DMA thread byte offset",
        "DMA_LOOP:",
        f"    rem.u32 %r5, %r3, {b};          // buffer",
        "    shl.b32 %r6, %r5, 1;",
        "    add.s32 %r7, %r6, 1;            // empty barrier 1+2b",
        "    add.s32 %r8, %r6, 2;            // full barrier 2+2b",
        f"    mul.lo.s32 %r9, %r5, {buf_bytes};",
        "    add.s32 %r9, %r9, %r2;",
        "    add.s32 %r9, %r9, %r4;",
        f"    bar.sync %r7, {n};",
        "    mov.u32 %r10, %r3;",
    ]
    for k in range(per_dma):
        lines.append("    add.s32 %r10, %r10, %r1;")
        lines.append(f"    st.shared.u32 [%r9+{4 * nd * k}], %r10;")
    lines += [
        f"    bar.arrive %r8, {n};",
        "    add.s32 %r3, %r3, 1;",
        f"    setp.lt.u32 %p2, %r3, {t};",
        "    @%p2 bra DMA_LOOP;",
        "    ret;",
        "COMPUTE:",
    ]
    for buf in range(b):
        lines.append(f"    bar.arrive {1 + 2 * buf}, {n};")
    lines += [
        f"    sub.s32 %r11, %r1, {nd};",
        "    shl.b32 %r4, %r11, 2;           // compute thread byte offset",
        "    mov.u32 %r20, 0;                // accumulator",
        "COMPUTE_LOOP:",
        f"    rem.u32 %r5, %r3, {b};",
        "    shl.b32 %r6, %r5, 1;",
        "    add.s32 %r7, %r6, 1;",
        "    add.s32 %r8, %r6, 2;",
        f"    mul.lo.s32 %r9, %r5, {buf_bytes};",
        "    add.s32 %r9, %r9, %r2;",
        "    add.s32 %r9, %r9, %r4;",
        f"    bar.sync %r8, {n};",
    ]
    for k in range(e):
        lines.append(f"    ld.shared.u32 %r21, [%r9+{4 * nc * k}];")
        work(lines, "%r20", w, "%r21")
    lines += [
        "    add.s32 %r3, %r3, 1;",
        f"    setp.lt.u32 %p2, %r3, {t - b + 1};",
        f"    @%p2 bar.arrive %r7, {n};",
        f"    setp.lt.u32 %p3, %r3, {t};",
        "    @%p3 bra COMPUTE_LOOP;",
    ] + STORE_RESULT
    return n, lines


def singe(a):
    wcount, p, s, k, r = a.warps, a.phases, a.straight, a.shuffles, a.broadcasts
    n = 32 * wcount
    region = 4 * n            # one word per thread, per half
    xchg = region * 2         # warp-synchronous exchange slots after the two halves
    bcast = xchg + 4 * n      # one broadcast word per warp after the exchange slots
    lines = header(n, bcast + (4 * wcount if r else 0))
    lines += [
        "    mov.u32 %r1, %tid.x;",
        "    and.b32 %r2, %r1, 31;           // lane",
        "    shr.u32 %r3, %r1, 5;            // warp",
        "    mov.u32 %r4, smem;",
        "    shl.b32 %r5, %r1, 2;",
        f"    add.s32 %r6, %r5, {xchg};",
        "    add.s32 %r6, %r6, %r4;          // own exchange slot",
        "    xor.b32 %r7, %r2, 1;            // neighbour lane",
        "    sub.s32 %r8, %r1, %r2;",
        "    add.s32 %r8, %r8, %r7;",
        "    shl.b32 %r8, %r8, 2;",
        f"    add.s32 %r8, %r8, {xchg};",
        "    add.s32 %r8, %r8, %r4;          // neighbour's exchange slot",
        "    add.s32 %r9, %r5, %r4;          // own word in half 0",
        f"    add.s32 %r10, %r1, 32;",
        f"    rem.u32 %r10, %r10, {n};",
        "    shl.b32 %r10, %r10, 2;",
        "    add.s32 %r10, %r10, %r4;        // next warp's word in half 0",
        "    mov.u32 %r11, 0;                // phase",
        "    mov.u32 %r20, %r1;              // accumulator",
    ]
    if r:
        lines += [
            "    shl.b32 %r16, %r3, 2;",
            f"    add.s32 %r16, %r16, {bcast};",
            "    add.s32 %r16, %r16, %r4;        // the warp's broadcast word",
        ]
    lines += [
        "PHASE:",
        "    and.b32 %r12, %r11, 1;",
        f"    mul.lo.s32 %r12, %r12, {region};",
        "    add.s32 %r13, %r9, %r12;",
        "    add.s32 %r14, %r10, %r12;",
        "    rem.u32 %r15, %r11, 15;",
        "    add.s32 %r15, %r15, 1;          // barrier id 1..15",
    ]
    work(lines, "%r20", s, "%r11")
    for i in range(k):
        lines.append(f"    shfl.sync.bfly.b32 %r21, %r20, {1 << (i % 5)}, 31, -1;")
        lines.append("    add.s32 %r20, %r20, %r21;")

    def exchange(store, slot, dest):
        # A warp-synchronous exchange: the store, then every lane adds what `slot` holds.
        lines.extend(store)
        if not a.no_warp_barrier:
            lines.append("    bar.warp.sync -1;")
        lines.append(f"    ld.shared.u32 {dest}, [{slot}];")
        lines.append(f"    add.s32 %r20, %r20, {dest};")
        if not a.no_warp_barrier:
            lines.append("    bar.warp.sync -1;")

    exchange(["    st.shared.u32 [%r6], %r20;"], "%r8", "%r22")
    for j in range(r):
        exchange([f"    setp.eq.u32 %p2, %r2, {j % 32};", "    @%p2 st.shared.u32 [%r16], %r20;"],
                 "%r16", "%r24")
    lines += [
        "    st.shared.u32 [%r13], %r20;",
        f"    bar.sync %r15, {n};",
        "    ld.shared.u32 %r23, [%r14];",
        "    xor.b32 %r20, %r20, %r23;",
        "    add.s32 %r11, %r11, 1;",
        f"    setp.lt.u32 %p1, %r11, {p};",
        "    @%p1 bra PHASE;",
    ] + STORE_RESULT
    return n, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="shape", required=True)
    c = sub.add_parser("cudadma")
    c.add_argument("--dma-warps", type=int, default=2)
    c.add_argument("--compute-warps", type=int, default=4)
    c.add_argument("--depth", type=int, default=2)
    c.add_argument("--trips", type=int, default=64)
    c.add_argument("--elems", type=int, default=4)
    c.add_argument("--work", type=int, default=8)
    s = sub.add_parser("singe")
    s.add_argument("--warps", type=int, default=8)
    s.add_argument("--phases", type=int, default=100)
    s.add_argument("--straight", type=int, default=16)
    s.add_argument("--shuffles", type=int, default=5)
    s.add_argument("--broadcasts", type=int, default=0)
    s.add_argument("--no-warp-barrier", action="store_true")
    for p in (c, s):
        p.add_argument("--print-size", action="store_true")
    a = ap.parse_args()
    n, lines = (cudadma if a.shape == "cudadma" else singe)(a)
    if a.print_size:
        print(n, file=sys.stderr)
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
