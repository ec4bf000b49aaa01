// Two-warp deadlock: warp 0 syncs on barrier 1 then barrier 2, warp 1 syncs on barrier 2
// then barrier 1 (each barrier counts 64 = both warps).  Warp 0 waits at barrier 1 for
// warp 1, which waits at barrier 2 for warp 0: a cycle in every execution.
// Launch: 64 threads (2 warps).  Expected: violation (deadlock).
template <int ID, int COUNT> __device__ __forceinline__ void bar_sync() {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}

__global__ void __launch_bounds__(64) two_warp_cycle(float *out) {
    const int warp = threadIdx.x / 32;
    if (warp == 0) {
        bar_sync<1, 64>();
        bar_sync<2, 64>();
    } else {
        bar_sync<2, 64>();
        bar_sync<1, 64>();
    }
    out[blockIdx.x * 64 + threadIdx.x] = 1.0f;
}
