// pipeline_bug.cu with the bug fixed: the consumer arrives on the stage's "empty" barrier
// once it has read the stage, and the producer waits on it before it overwrites the stage
// (from the third tile on). Verified for every trip count weft explores; the report says
// which trip counts were not explored (docs/semantics.md §6.5: a bounded verdict).
#define STAGES 2

__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(64) pipeline(const float *in, float *out, int n) {
    __shared__ float stage[STAGES][32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = 0; i < n; ++i) {
        int s = i % STAGES;
        if (warp == 0) {
            if (i >= STAGES) bar_sync(3 + s, 64);  // empty[s]
            stage[s][lane] = in[i * 32 + lane];
            bar_arrive(1 + s, 64);                 // full[s]
        } else {
            bar_sync(1 + s, 64);                   // full[s]
            out[i * 32 + lane] = stage[s][lane];
            if (i + STAGES < n) bar_arrive(3 + s, 64);  // empty[s], when it is refilled
        }
    }
}
