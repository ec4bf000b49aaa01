// Barrier id and count in registers, computed from threadIdx/blockDim as CUTLASS's
// NamedBarrier and FlashAttention-3 do.  Two warpgroups of 128 threads: warpgroup g
// (warps 4g..4g+3) synchronizes on barrier 1+g with a count of blockDim.x/2 = 128, and
// exchanges data only inside its own half of the shared buffer.  At the end both
// warpgroups meet on barrier 3 with a count of blockDim.x (also from a register) before
// warpgroup 0 reads warpgroup 1's half.  All operands are known once the CTA shape is.
// Launch: 256 threads (8 warps).  Expected: verified.
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(256) register_operands(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float smem[256];
    const int t = threadIdx.x;
    const int wg = t / 128;                   // warpgroup index
    const int wg_threads = blockDim.x / 2;    // 128
    const int local = t % 128;
    smem[t] = in[blockIdx.x * 256 + t];
    named_barrier_sync(1 + wg, wg_threads);   // barrier 1 (wg 0) or 2 (wg 1)
    float v = smem[wg * 128 + (local + 1) % 128];
    named_barrier_sync(1 + wg, wg_threads);   // second generation: protects the overwrite
    smem[t] = v * 0.5f;
    named_barrier_sync(3, blockDim.x);        // both warpgroups
    if (wg == 0)
        v += smem[128 + local];
    out[blockIdx.x * 256 + t] = v;
}
