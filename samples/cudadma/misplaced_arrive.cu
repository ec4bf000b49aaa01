// BUG variant of single_buffer.cu (the two-phase RTM bug of the WEFT paper, Listing 3):
// the compute warps signal "buffer empty" before their last read of the buffer, so the
// DMA warps may overwrite it while it is still being read (write-after-read race).
// Barriers as in single_buffer.cu: 1 = empty, 2 = full, 192 threads each.
// Launch: 192 threads (6 warps).  Expected: violation (race).
#define COMPUTE_THREADS 128
#define DMA_THREADS 64
#define CTA_THREADS (COMPUTE_THREADS + DMA_THREADS)
#define ELEMS 256
#define ITERS 4
#define BAR_EMPTY 1
#define BAR_FULL 2

__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void __launch_bounds__(CTA_THREADS)
misplaced_arrive(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float buf[ELEMS];
    const int tid = threadIdx.x;
    if (tid < COMPUTE_THREADS) {
        float acc = 0.0f;
        bar_arrive(BAR_EMPTY, CTA_THREADS);          // start_async_dma()
        for (int it = 0; it < ITERS; ++it) {
            bar_sync(BAR_FULL, CTA_THREADS);         // wait_for_dma_finish()
            acc += buf[tid];
            if (it + 1 < ITERS)
                bar_arrive(BAR_EMPTY, CTA_THREADS);  // BUG: start_async_dma() too early ...
            acc *= buf[ELEMS - 1 - tid];             // ... the buffer is still being read here
        }
        out[blockIdx.x * COMPUTE_THREADS + tid] = acc;
    } else {
        const int d = tid - COMPUTE_THREADS;
        for (int it = 0; it < ITERS; ++it) {
            bar_sync(BAR_EMPTY, CTA_THREADS);        // wait_for_dma_start()
            for (int e = d; e < ELEMS; e += DMA_THREADS)
                buf[e] = in[(blockIdx.x * ITERS + it) * ELEMS + e];
            bar_arrive(BAR_FULL, CTA_THREADS);       // finish_async_dma()
        }
    }
}
