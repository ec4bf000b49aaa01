// CudaDMA-style manual buffering: two independent DMA warps, each owning one buffer
// (warp 4 loads A through barriers 1 "A empty" / 2 "A full", warp 5 loads B through
// barriers 3 / 4; each barrier counts 128 compute + 32 DMA = 160 threads).  The compute
// warps (0-3) wait for both buffers, combine them, and release both.  At the end every
// thread meets at __syncthreads() (bar.sync 0, all 192 threads) and warp 0 sums the
// per-thread partial results that the compute warps left in shared memory.
// Launch: 192 threads (6 warps).  Expected: verified.
#define COMPUTE_THREADS 128
#define PAIR_THREADS (COMPUTE_THREADS + 32)
#define CTA_THREADS (COMPUTE_THREADS + 64)
#define ELEMS 128
#define ITERS 3

__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(CTA_THREADS)
manual_buffering(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ out) {
    __shared__ float buf_a[ELEMS];
    __shared__ float buf_b[ELEMS];
    __shared__ float partial[COMPUTE_THREADS];
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    if (warp < 4) {
        float acc = 0.0f;
        bar_arrive(1, PAIR_THREADS);
        bar_arrive(3, PAIR_THREADS);
        for (int it = 0; it < ITERS; ++it) {
            bar_sync(2, PAIR_THREADS);
            bar_sync(4, PAIR_THREADS);
            acc += buf_a[tid] * buf_b[ELEMS - 1 - tid];
            if (it + 1 < ITERS) {
                bar_arrive(1, PAIR_THREADS);
                bar_arrive(3, PAIR_THREADS);
            }
        }
        partial[tid] = acc;
    } else if (warp == 4) {
        for (int it = 0; it < ITERS; ++it) {
            bar_sync(1, PAIR_THREADS);
            for (int e = lane; e < ELEMS; e += 32)
                buf_a[e] = a[(blockIdx.x * ITERS + it) * ELEMS + e];
            bar_arrive(2, PAIR_THREADS);
        }
    } else {
        for (int it = 0; it < ITERS; ++it) {
            bar_sync(3, PAIR_THREADS);
            for (int e = lane; e < ELEMS; e += 32)
                buf_b[e] = b[(blockIdx.x * ITERS + it) * ELEMS + e];
            bar_arrive(4, PAIR_THREADS);
        }
    }
    __syncthreads();
    if (warp == 0)
        out[blockIdx.x * 32 + lane] =
            partial[lane] + partial[lane + 32] + partial[lane + 64] + partial[lane + 96];
}
