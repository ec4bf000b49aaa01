// CudaDMA-style single buffering (CudaDMA "cudaDMA sequential, single buffer").
// Warps 0-3 compute, warps 4-5 are DMA warps that copy global -> shared.
// Barrier 1 = "buffer empty" (compute arrives, DMA syncs),
// barrier 2 = "buffer full"  (DMA arrives, compute syncs); 192 threads each.
// Launch: 192 threads (6 warps).  Expected: verified.
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
single_buffer(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float buf[ELEMS];
    const int tid = threadIdx.x;
    if (tid < COMPUTE_THREADS) {
        float acc = 0.0f;
        bar_arrive(BAR_EMPTY, CTA_THREADS);          // start_async_dma()
        for (int it = 0; it < ITERS; ++it) {
            bar_sync(BAR_FULL, CTA_THREADS);         // wait_for_dma_finish()
            acc += buf[tid] * buf[ELEMS - 1 - tid];
            if (it + 1 < ITERS)
                bar_arrive(BAR_EMPTY, CTA_THREADS);  // start_async_dma() for the next tile
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
