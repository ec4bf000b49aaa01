// Barrier thread count not a multiple of the warp size: the count is computed as three
// quarters of the block, 48 for a 64-thread block.  PTX requires a multiple of 32
// (arrival is counted per warp).
// Launch: 64 threads (2 warps).  Expected: violation (invalid-thread-count).
__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(64) count_not_multiple(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float smem[64];
    const int t = threadIdx.x;
    smem[t] = in[blockIdx.x * 64 + t];
    bar_sync(1, blockDim.x * 3 / 4);          // BUG: 48 threads
    out[blockIdx.x * 64 + t] = smem[63 - t];
}
