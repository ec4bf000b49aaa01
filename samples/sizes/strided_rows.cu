// pipeline.cu reading rows of a matrix with a leading dimension `ld` that is a kernel input:
// in[i * ld + lane]. nvcc strength-reduces the address to a pointer that advances by
// 4 * ld bytes per trip, a sum with an unknown term that differs at every trip; the pointer
// only ever addresses global memory, so it cannot change what the kernel synchronizes or
// which shared bytes it touches, and the induction (docs/induction.md §2) leaves it out of
// its comparison. Expected: verified for every n (up to the no-overflow bound), by the
// induction.
#define STAGES 2

__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(64)
strided_rows(const float *in, float *out, int n, long ld) {
    __shared__ float stage[STAGES][32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = 0; i < n; ++i) {
        int s = i % STAGES;
        if (warp == 0) {
            if (i >= STAGES) bar_sync(3 + s, 64);  // empty[s]
            stage[s][lane] = in[i * ld + lane];
            bar_arrive(1 + s, 64);                 // full[s]
        } else {
            bar_sync(1 + s, 64);                   // full[s]
            out[i * 32 + lane] = stage[s][lane];
            if (i + STAGES < n) bar_arrive(3 + s, 64);  // empty[s], when it is refilled
        }
    }
}
