// A producer/consumer pipeline over named barriers (warp 0 produces, warps 1-2 consume)
// whose consumers printf what they read: printf (vprintf) has no shared-memory or
// synchronization effect; its argument buffer is local memory.
// Expected: verified.
#include <cstdio>

__device__ __forceinline__ void bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int n) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}

__global__ void __launch_bounds__(96) printf_pipeline(const float *in, float *out) {
    __shared__ float buf[64];
    unsigned t = threadIdx.x;
    if (t < 32) {
        for (int i = 0; i < 4; ++i) {
            bar_sync(1, 96);  // empty: wait until the consumers released the buffer
            buf[t] = in[i * 64 + t];
            buf[t + 32] = in[i * 64 + t + 32];
            bar_arrive(2, 96);  // full
        }
    } else {
        unsigned c = t - 32;
        bar_arrive(1, 96);
        for (int i = 0; i < 4; ++i) {
            bar_sync(2, 96);
            float v = buf[c];
            if (c == 0) printf("iteration %d: %f\n", i, v);
            out[i * 64 + c] = v;
            if (i < 3) bar_arrive(1, 96);
        }
    }
}
