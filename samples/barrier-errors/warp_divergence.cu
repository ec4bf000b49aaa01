// Barrier divergence inside a warp: lanes 0-15 and lanes 16-31 of each warp reach two
// different `bar.sync 1, 64` instructions.  `bar.sync` is `barrier.sync.aligned`, which
// requires all threads of a warp to execute the same instruction.  (A thread-granular
// count would even be satisfied: 64 threads do arrive -- the violation is the divergence.)
// Launch: 64 threads (2 warps).  Expected: violation (barrier-divergence).
__global__ void __launch_bounds__(64) warp_divergence(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float smem[64];
    const int t = threadIdx.x, lane = t % 32;
    float v = in[blockIdx.x * 64 + t];
    if (lane < 16) {
        smem[t] = v * 2.0f;
        asm volatile("bar.sync 1, 64;" ::: "memory");
        v = smem[63 - t] + 1.0f;
    } else {
        smem[t] = v * 3.0f;
        asm volatile("bar.sync 1, 64;" ::: "memory");
        v = smem[63 - t] - 1.0f;
    }
    out[blockIdx.x * 64 + t] = v;
}
