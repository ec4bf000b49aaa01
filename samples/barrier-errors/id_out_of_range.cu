// Barrier id out of range, computed at runtime: each pair of warps p gets its own barrier
// id 12 + 8*p, i.e. 12 for warps 0-1 (valid) and 20 for warps 2-3 (there are only 16
// barriers, 0-15).  The count 64 is valid.
// Launch: 128 threads (4 warps).  Expected: violation (invalid-barrier-id).
__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(128) id_out_of_range(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float smem[128];
    const int t = threadIdx.x;
    const int pair = t / 64;
    smem[t] = in[blockIdx.x * 128 + t];
    bar_sync(12 + 8 * pair, 64);              // BUG: 20 for the second pair
    out[blockIdx.x * 128 + t] = smem[pair * 64 + (t + 32) % 64];
}
