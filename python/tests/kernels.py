"""Triton kernels for the tests, and helpers that compile them for a GPU target without a GPU
(``triton.compile(ASTSource(...), target=GPUTarget("cuda", capability, 32))``).

- ``matmul_ws_kernel``: a TMA matmul whose k loop is ``tl.range(..., warp_specialize=True)``
  (Triton's automatic warp specialization: producer and consumer partitions, an mbarrier
  ring, named barriers), the shape of Triton's tutorial 09; correct.
- ``row_sum_kernel``: sums a row block by block; each block's ``tl.sum`` goes through shared
  memory with barriers, so the size argument ``n_cols`` decides how many barriers run.
- ``matmul_kernel``: the pipelined matmul (``num_stages=3``); ``K`` bounds its k loop.
- ``named_barrier_kernel``: inline PTX (``tl.inline_asm_elementwise``) that synchronizes
  the CTA's 128 threads on named barrier 1: ``bar.sync 1, 128`` is correct; ``bar.sync 1,
  64`` is the seeded bug
  (a count of half the CTA: which warps meet at each generation depends on timing, so the
  barrier is recycled unsafely).
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

CAPABILITIES = (90, 100)


@triton.jit
def matmul_ws_kernel(a_desc, b_desc, c_desc, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    k_tiles = tl.cdiv(K, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in tl.range(k_tiles, warp_specialize=True):
        offs_k = ki * BLOCK_K
        a = a_desc.load([offs_am, offs_k])
        b = b_desc.load([offs_bn, offs_k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([offs_am, offs_bn], acc.to(tl.float16))


@triton.jit
def row_sum_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + row, acc)


@triton.jit
def tile_row_sums_kernel(out_ptr, in_ptr, M: tl.constexpr, N: tl.constexpr):
    # The sums of the M rows of one M x N tile: each row spans two warps, and every thread
    # holding a row's sum stores it to shared memory for the layout of the global store.
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(in_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm, tl.sum(x, axis=1))


@triton.jit
def row_sum_loaded_kernel(out_ptr, in_ptr, n_ptr, BLOCK: tl.constexpr):
    # The same loop, its bound read from global memory by a volatile load (which another
    # thread may write while the kernel runs, so it is no global input, docs/semantics.md
    # §6.5): no launch argument fixes it.
    row = tl.program_id(0)
    n_cols = tl.load(n_ptr, volatile=True)
    acc = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + row, acc)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(tl.float16), mask=mask)


@triton.jit
def named_barrier_kernel(out_ptr, in_ptr, BLOCK: tl.constexpr, ASM: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs)
    # Every thread of the CTA (4 warps, one element each) runs ASM: `bar.sync 1, COUNT`.
    x = tl.inline_asm_elementwise(ASM, "=r,r", [x], dtype=tl.float32, is_pure=False, pack=1)
    total = tl.sum(x, axis=0)
    tl.store(out_ptr + offs, x / total)


def _target(capability: int) -> GPUTarget:
    return GPUTarget("cuda", capability, 32)


def compile_matmul_ws(capability: int):
    """The warp-specialized matmul. Each host tensor descriptor becomes a 128-byte
    CUtensorMap parameter plus its shape (2 x i32) and strides (2 x i64), so M, N, K are PTX
    parameters 15, 16, 17. On sm_90, Triton 3.9 specializes 64-row tiles (3 warp groups)."""
    block_m = 64 if capability == 90 else 128
    bn, bk = 128, 64
    src = ASTSource(
        fn=matmul_ws_kernel,
        signature={"a_desc": f"tensordesc<fp16[{block_m}, {bk}]>",
                   "b_desc": f"tensordesc<fp16[{bn}, {bk}]>",
                   "c_desc": f"tensordesc<fp16[{block_m}, {bn}]>",
                   "M": "i32", "N": "i32", "K": "i32",
                   "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
        constexprs={"BLOCK_M": block_m, "BLOCK_N": bn, "BLOCK_K": bk},
    )
    return triton.compile(src, target=_target(capability), options={"num_warps": 4, "num_stages": 3})


def compile_row_sum(capability: int):
    src = ASTSource(
        fn=row_sum_kernel,
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 256},
    )
    return triton.compile(src, target=_target(capability), options={"num_warps": 4})


def compile_tile_row_sums(capability: int):
    src = ASTSource(
        fn=tile_row_sums_kernel,
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "M": "constexpr", "N": "constexpr"},
        constexprs={"M": 64, "N": 64},
    )
    return triton.compile(src, target=_target(capability), options={"num_warps": 4})


def compile_row_sum_loaded(capability: int):
    src = ASTSource(
        fn=row_sum_loaded_kernel,
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "n_ptr": "*i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 256},
    )
    return triton.compile(src, target=_target(capability), options={"num_warps": 4})


def compile_matmul(capability: int):
    src = ASTSource(
        fn=matmul_kernel,
        signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                   "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
                   "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
        constexprs={"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
    )
    return triton.compile(src, target=_target(capability), options={"num_warps": 4, "num_stages": 3})


def compile_named_barrier(capability: int, barrier_threads: int):
    src = ASTSource(
        fn=named_barrier_kernel,
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "BLOCK": "constexpr", "ASM": "constexpr"},
        constexprs={"BLOCK": 128, "ASM": f"bar.sync 1, {barrier_threads};\n\tmov.b32 $0, $1;"},
    )
    return triton.compile(src, target=_target(capability), options={"num_warps": 4})
