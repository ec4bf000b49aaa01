"""Compile Triton's row reductions to PTX without a GPU (triton.compile with an explicit
GPUTarget; Triton 3.9.0 from pip). The kernels are the idioms of Triton's tutorials and
standard library (`tl.sum`, `tl.max`, `tl.argmax` along the rows of a 2D tile, the
mean-then-variance of tutorial 05's layer norm on a tile of rows); what is under test is
the code Triton generates for them: each row spans two warps, which reduce their halves with
butterfly shuffles, exchange the partials through shared memory, and then store the row's
result, replicated over the threads that hold it, to shared memory for the layout change
before the global store.

    python corpus/src/triton_reductions.py WHICH OUT.ptx

WHICH is one of the keys of KERNELS at the bottom.
"""
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def row_stats(X, Mean, Var, M: tl.constexpr, N: tl.constexpr):
    # Tutorial 05's statistics (mean = sum / N, var = sum((x - mean)^2) / N) on M rows at once.
    pid = tl.program_id(0)
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + pid * M * N + rm[:, None] * N + rn[None, :]).to(tl.float32)
    mean = tl.sum(x, axis=1) / N
    xc = x - mean[:, None]
    var = tl.sum(xc * xc, axis=1) / N
    tl.store(Mean + pid * M + rm, mean)
    tl.store(Var + pid * M + rm, var)


@triton.jit
def row_reduce(X, Out, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    # One reduction along the rows: OP 0 is tl.sum, 1 tl.max, 2 tl.argmax.
    pid = tl.program_id(0)
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + pid * M * N + rm[:, None] * N + rn[None, :])
    if OP == 0:
        r = tl.sum(x, axis=1)
    elif OP == 1:
        r = tl.max(x, axis=1)
    else:
        r = tl.argmax(x, axis=1)
    tl.store(Out + pid * M + rm, r)


def compile_one(fn, signature, m, n, capability, warps, **constexprs):
    constexprs = {"M": m, "N": n, **constexprs}
    src = ASTSource(fn=fn, signature={**signature, **{k: "constexpr" for k in constexprs}},
                    constexprs=constexprs)
    return triton.compile(src, target=GPUTarget("cuda", capability, 32),
                          options={"num_warps": warps})


KERNELS = {
    "row-stats-sm90": lambda: compile_one(
        row_stats, {"X": "*fp16", "Mean": "*fp32", "Var": "*fp32"}, 64, 64, 90, 4),
    "row-stats-sm100": lambda: compile_one(
        row_stats, {"X": "*fp16", "Mean": "*fp32", "Var": "*fp32"}, 64, 64, 100, 4),
    "row-max-sm90": lambda: compile_one(
        row_reduce, {"X": "*fp32", "Out": "*fp32"}, 128, 128, 90, 8, OP=1),
    "row-argmax-sm90": lambda: compile_one(
        row_reduce, {"X": "*fp32", "Out": "*i32"}, 64, 64, 90, 4, OP=2),
    "row-sum-i32-sm90": lambda: compile_one(
        row_reduce, {"X": "*i32", "Out": "*i32"}, 64, 64, 90, 4, OP=0),
}


def main(which, out_path):
    compiled = KERNELS[which]()
    with open(out_path, "w") as f:
        f.write(compiled.asm["ptx"])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
