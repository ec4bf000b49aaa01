"""Compile small Triton kernels to PTX without a GPU, via triton.compile with an explicit
GPUTarget: the tutorial's fused softmax (one row per program), a pipelined matmul (tl.dot
with num_stages=3: async copies/TMA and mbarriers on Hopper), and a TMA matmul whose k loop
is `tl.range(..., warp_specialize=True)` (Triton >= 3.4 automatic warp specialization:
producer/consumer partitions with setmaxnreg, mbarriers and named barriers), for sm_90a and
sm_100a; and tutorial 05's layer-norm backward (`_layer_norm_bwd_dx_fused`: a spin lock on
global memory, `tl.atomic_cas` in a loop, around the partial dW/dB accumulation).

    python corpus/src/triton_kernels.py softmax OUT.ptx
    python corpus/src/triton_kernels.py matmul OUT.ptx
    python corpus/src/triton_kernels.py matmul-ws-sm90 OUT.ptx
    python corpus/src/triton_kernels.py matmul-ws-sm100 OUT.ptx
    python corpus/src/triton_kernels.py layernorm-bwd OUT.ptx
"""
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + offs, num / den, mask=mask)


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
def matmul_ws_kernel(a_desc, b_desc, c_desc, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Shape of the warp-specialized TMA matmul in Triton's tutorial 09 (persistent matmul),
    # without the persistent tile loop: A is MxK, B is NxK (K-major), both loaded by TMA.
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


# Triton tutorial 05 (python/tutorials/05-layer-norm.py in triton-lang/triton), the backward
# kernel for the input gradient, as the tutorial writes it: each program computes one row's
# dx, then takes one of GROUP_SIZE_M spin locks (atomic_cas on Lock in a loop), accumulates
# its partial dW/dB into that group's buffers, and releases the lock with atomic_xchg.
@triton.jit
def _layer_norm_bwd_dx_fused(DX,  # pointer to the input gradient
                             DY,  # pointer to the output gradient
                             DW,  # pointer to the partial sum of weights gradient
                             DB,  # pointer to the partial sum of biases gradient
                             X,  # pointer to the input
                             W,  # pointer to the weights
                             Mean,  # pointer to the mean
                             Rstd,  # pointer to the 1/std
                             Lock,  # pointer to the lock
                             stride,  # how much to increase the pointer when moving by 1 row
                             N,  # number of columns in X
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # Map the program id to the elements of X, DX, and DY it should compute.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # Offset locks and weights/biases gradient pointer for parallel reduction
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    # Load data to SRAM
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    # Compute dx
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    # Write dx
    tl.store(DX + cols, dx, mask=mask)
    # Accumulate partial sums for dw/db
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    # First store doesn't accumulate
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)

    # need a barrier to ensure all threads finished before
    # releasing the lock
    tl.debug_barrier()

    # Release the lock
    tl.atomic_xchg(Lock, 0)


def compile_layernorm_bwd():
    # The tutorial's launch for N = 1024 fp16 columns: BLOCK_SIZE_N = next_power_of_2(N) =
    # 1024, num_warps = min(max(BLOCK_SIZE_N // 256, 1), 8) = 4, GROUP_SIZE_M = 256 (N <= 1024).
    src = ASTSource(
        fn=_layer_norm_bwd_dx_fused,
        signature={"DX": "*fp16", "DY": "*fp16", "DW": "*fp16", "DB": "*fp16", "X": "*fp16",
                   "W": "*fp16", "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32",
                   "stride": "i32", "N": "i32",
                   "GROUP_SIZE_M": "constexpr", "BLOCK_SIZE_N": "constexpr"},
        constexprs={"GROUP_SIZE_M": 256, "BLOCK_SIZE_N": 1024},
    )
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


def compile_matmul_ws(capability, block_m):
    # Host-side tensor descriptors: each becomes a 128-byte by-value CUtensorMap param
    # followed by its shape (2 x i32) and strides (2 x i64), so M, N, K are params 15-17.
    # On sm_90 (Triton's Hopper warp-spec pass) BLOCK_M=64 with num_warps=4 gives 3 warp
    # groups (384 threads); BLOCK_M=128 fails in Triton 3.9 ("descriptor block and tensor
    # must have the same number of elements") and num_warps=8 silently drops the
    # specialization, so the sm_90 variant uses 64x128x64 tiles.
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
    return triton.compile(src, target=GPUTarget("cuda", capability, 32),
                          options={"num_warps": 4, "num_stages": 3})


def compile_matmul():
    src = ASTSource(
        fn=matmul_kernel,
        signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                   "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
                   "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
        constexprs={"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
    )
    return triton.compile(src, target=GPUTarget("cuda", 90, 32),
                          options={"num_warps": 4, "num_stages": 3})


def compile_softmax():
    src = ASTSource(
        fn=softmax_kernel,
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32",
                   "out_row_stride": "i32", "n_cols": "i32", "BLOCK_SIZE": "constexpr"},
        constexprs={"BLOCK_SIZE": 1024},
    )
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


def main(which, out_path):
    compiled = {"softmax": compile_softmax, "matmul": compile_matmul,
                "matmul-ws-sm90": lambda: compile_matmul_ws(90, 64),
                "matmul-ws-sm100": lambda: compile_matmul_ws(100, 128),
                "layernorm-bwd": compile_layernorm_bwd}[which]()
    with open(out_path, "w") as f:
        f.write(compiled.asm["ptx"])
    print(compiled.metadata.name, compiled.metadata.num_warps)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
