// Too many participants for the count: three warps sync on barrier 1 with a count of 64.
// The first two warps to arrive complete generation 1 and the barrier recycles; the third
// warp opens generation 2 alone and waits forever (the others exit, and exit does not
// release a counted barrier).  Hardware hangs; under the WEFT semantics this is a deadlock
// (the barrier never holds more than its count, so no "overflow" error state is reached).
// Launch: 96 threads (3 warps).  Expected: violation (deadlock).
template <int ID, int COUNT> __device__ __forceinline__ void bar_sync() {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}

__global__ void __launch_bounds__(96) too_many_participants(const float *__restrict__ in, float *__restrict__ out) {
    const float v = in[blockIdx.x * 96 + threadIdx.x];
    bar_sync<1, 64>();                        // BUG: 96 threads execute this, count is 64
    out[blockIdx.x * 96 + threadIdx.x] = v * 2.0f;
}
