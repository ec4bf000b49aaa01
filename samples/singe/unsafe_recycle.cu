// Singe-style kernel with an UNSAFE barrier recycle.  Warps 0 and 1 exchange a value
// through barrier 2, warps 2 and 3 through barrier 3 (both correct).  Then each pair
// does a handshake `bar.sync 1, 64` -- both pairs on the SAME barrier 1, and nothing
// orders the second generation of barrier 1 after the first.  So in some executions
// warp 0 meets warp 2 (or 3) instead of warp 1: the generations are not the same in all
// traces (not well-synchronized), although no trace deadlocks or errs (any two of the four
// syncs complete a generation).  No shared memory is touched around barrier 1, so the
// only violation is the recycle itself.
// Launch: 128 threads (4 warps).  Expected: violation (unsafe-recycling).
template <int ID, int COUNT> __device__ __forceinline__ void bar_sync() {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}
template <int ID, int COUNT> __device__ __forceinline__ void bar_arrive() {
    asm volatile("bar.arrive %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}

__shared__ float xfer[2][32];

__global__ void __launch_bounds__(128) unsafe_recycle(const float *__restrict__ in, float *__restrict__ out) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float v = in[blockIdx.x * 128 + threadIdx.x];
    switch (warp) {
    case 0:
        xfer[0][lane] = v;
        bar_arrive<2, 64>();                // -> W1
        bar_sync<1, 64>();                  // handshake with W1
        break;
    case 1:
        bar_sync<2, 64>();
        v += xfer[0][lane];                 // <- W0
        bar_sync<1, 64>();                  // handshake with W0
        break;
    case 2:
        xfer[1][lane] = v;
        bar_arrive<3, 64>();                // -> W3
        bar_sync<1, 64>();                  // BUG: handshake with W3 reuses barrier 1
        break;
    default:
        bar_sync<3, 64>();
        v += xfer[1][lane];                 // <- W2
        bar_sync<1, 64>();                  // BUG: handshake with W2 reuses barrier 1
        break;
    }
    out[blockIdx.x * 128 + threadIdx.x] = v;
}
