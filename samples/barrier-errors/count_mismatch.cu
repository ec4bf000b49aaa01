// Barrier count mismatch: warps 0 and 1 hand over a value through barrier 1, but the
// producer arrives with a count of 64 and the consumer syncs with a count of 96 (a typo).
// Both operations belong to the first generation of barrier 1, whichever comes first
// configures the count and the other one mismatches it: an error in every execution.
// Warps 2 and 3 do nothing.
// Launch: 128 threads (4 warps).  Expected: violation (barrier-count-mismatch).
template <int ID, int COUNT> __device__ __forceinline__ void bar_sync() {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}
template <int ID, int COUNT> __device__ __forceinline__ void bar_arrive() {
    asm volatile("bar.arrive %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}

__global__ void __launch_bounds__(128) count_mismatch(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float slot[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp == 0) {
        slot[lane] = in[blockIdx.x * 32 + lane];
        bar_arrive<1, 64>();
    } else if (warp == 1) {
        bar_sync<1, 96>();                    // BUG: should be 64
        out[blockIdx.x * 32 + lane] = slot[lane];
    }
}
