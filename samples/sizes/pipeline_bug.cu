// A two-stage producer/consumer pipeline over named barriers whose trip count is a kernel
// argument. Warp 0 copies tile i into stage i % 2 and arrives on the stage's "full"
// barrier; warp 1 waits on it and reads the stage. BUG: the producer never waits for the
// consumer to release a stage, so from the third tile on (trip counts above the number of
// stages) it overwrites a stage the consumer may still be reading, and its arrivals on the
// "full" barrier of that stage can complete a generation before the consumer joins it.
// With n <= 2 every stage is written once: no violation. weft explores n and names the
// smallest failing value (docs/semantics.md §6.5).
#define STAGES 2

__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(64) pipeline_bug(const float *in, float *out, int n) {
    __shared__ float stage[STAGES][32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = 0; i < n; ++i) {
        int s = i % STAGES;
        if (warp == 0) {
            stage[s][lane] = in[i * 32 + lane];
            bar_arrive(1 + s, 64);  // full[s]
        } else {
            bar_sync(1 + s, 64);    // full[s]
            out[i * 32 + lane] = stage[s][lane];
        }
    }
}
