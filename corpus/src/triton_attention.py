"""Compile a Triton flash-attention forward kernel to PTX without a GPU, in the shape of
Triton's tutorial 06 (fused attention, TMA variant): Q, K, V and O through host tensor
descriptors, online softmax over the key/value blocks, and the key loop written as
`tl.range(lo, hi, BLOCK_N, warp_specialize=True)` (Triton's automatic warp specialization:
a TMA producer partition and MMA/softmax consumer partitions, mbarriers between them).
Non-causal, fp16, HEAD_DIM 64.

    python corpus/src/triton_attention.py attention-ws-sm90 OUT.ptx
    python corpus/src/triton_attention.py attention-ws-sm100 OUT.ptx
"""
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def attn_fwd_ws(sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offset_y = off_z + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    offsetkv_y = offset_y
    for start_n in tl.range(0, N_CTX, BLOCK_N, warp_specialize=True):
        k = desc_k.load([offsetkv_y, 0]).T
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = desc_v.load([offsetkv_y, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
        offsetkv_y += BLOCK_N
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(tl.float16))


def compile_attention(capability, block_m, block_n, num_warps):
    d = 64
    src = ASTSource(
        fn=attn_fwd_ws,
        signature={"sm_scale": "fp32", "M": "*fp32", "Z": "i32", "H": "i32",
                   "desc_q": f"tensordesc<fp16[{block_m}, {d}]>",
                   "desc_k": f"tensordesc<fp16[{block_n}, {d}]>",
                   "desc_v": f"tensordesc<fp16[{block_n}, {d}]>",
                   "desc_o": f"tensordesc<fp16[{block_m}, {d}]>",
                   "N_CTX": "i32",
                   "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
        constexprs={"HEAD_DIM": d, "BLOCK_M": block_m, "BLOCK_N": block_n},
    )
    return triton.compile(src, target=GPUTarget("cuda", capability, 32),
                          options={"num_warps": num_warps, "num_stages": 2})


def main(which, out_path):
    # On sm_90 Triton 3.9's Hopper warp-spec pass rejects 128-row Q tiles with num_warps=4
    # ("descriptor block and tensor must have the same number of elements", as for the
    # matmul in triton_kernels.py) and silently emits an unspecialized 256-thread kernel
    # with num_warps=8, so the sm_90 variant uses 64-row tiles: 3 warp groups, 384 threads.
    compiled = {"attention-ws-sm90": lambda: compile_attention(90, 64, 64, 4),
                "attention-ws-sm100": lambda: compile_attention(100, 128, 64, 4)}[which]()
    with open(out_path, "w") as f:
        f.write(compiled.asm["ptx"])
    print(compiled.metadata.name, compiled.metadata.num_warps)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
