// Three-warp deadlock: barrier 1 joins warps 0 and 1, barrier 2 warps 1 and 2, barrier 3
// warps 2 and 0 (count 64 each).  Warp 0 first waits on 3 (needs warp 2), warp 2 first
// waits on 2 (needs warp 1), warp 1 first waits on 1 (needs warp 0): a cycle of length
// three; no two warps alone deadlock, all three always do.
// Launch: 96 threads (3 warps).  Expected: violation (deadlock).
template <int ID, int COUNT> __device__ __forceinline__ void bar_sync() {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}

__global__ void __launch_bounds__(96) three_warp_cycle(float *out) {
    const int warp = threadIdx.x / 32;
    if (warp == 0) {
        bar_sync<3, 64>();
        bar_sync<1, 64>();
    } else if (warp == 1) {
        bar_sync<1, 64>();
        bar_sync<2, 64>();
    } else {
        bar_sync<2, 64>();
        bar_sync<3, 64>();
    }
    out[blockIdx.x * 96 + threadIdx.x] = 1.0f;
}
