// Missing arrive: warp 1 consumes data that warps 0 and 2 should both produce, through
// barrier 1 with a count of 96 -- but warp 2 forgot its `bar.arrive 1, 96` (it only does
// its own work on barrier 2 with warp 3).  Only 64 of the 96 threads ever register at
// barrier 1, so warp 1 blocks forever; the other warps exit, and exited warps do not
// release a barrier with an explicit count.
// Launch: 128 threads (4 warps).  Expected: violation (deadlock).
__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(128) missing_arrive(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float data[2][32];
    __shared__ float other[64];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float v = in[blockIdx.x * 128 + threadIdx.x];
    if (warp == 0) {
        data[0][lane] = v;
        bar_arrive(1, 96);
    } else if (warp == 1) {
        bar_sync(1, 96);                      // waits for 96 threads: never completes
        v = data[0][lane] + data[1][lane];
    } else {
        // warps 2 and 3: warp 2 should also write data[1] and arrive at barrier 1
        other[threadIdx.x - 64] = v;
        bar_sync(2, 64);
        v += other[(threadIdx.x - 64 + 32) % 64];
    }
    out[blockIdx.x * 128 + threadIdx.x] = v;
}
