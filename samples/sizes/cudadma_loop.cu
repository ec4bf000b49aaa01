// CudaDMA-style double buffering (samples/cudadma/double_buffer.cu) with the iteration
// count a kernel parameter: the DMA warps fill buffer (it % 2) while the compute warps
// consume the other one. Buffer b uses barrier 1+2b ("empty": compute arrives, DMA syncs)
// and 2+2b ("full": DMA arrives, compute syncs); every barrier counts 192. Warps 0-3
// compute, warps 4-5 DMA. Launch: 192 threads (6 warps).
// Expected: verified for every iteration count (the exploration up to its bound, the
// induction over the trip count beyond it, docs/induction.md), but for the largest values,
// where `it + 2 < iters` could wrap around. nvcc unrolls the compute loop 4 times: its
// remainder `iters & 3` runs first, a second variable of the exploration, and the induction
// runs once per remainder value, each over one residue class of `iters`.
#define COMPUTE_THREADS 128
#define DMA_THREADS 64
#define CTA_THREADS (COMPUTE_THREADS + DMA_THREADS)
#define ELEMS 128

__device__ __forceinline__ void bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ int bar_empty(int b) { return 1 + 2 * b; }
__device__ __forceinline__ int bar_full(int b) { return 2 + 2 * b; }

__global__ void __launch_bounds__(CTA_THREADS)
cudadma_loop(const float *__restrict__ in, float *__restrict__ out, int iters) {
    __shared__ float buf[2][ELEMS];
    const int tid = threadIdx.x;
    if (tid < COMPUTE_THREADS) {
        float acc = 0.0f;
        bar_arrive(bar_empty(0), CTA_THREADS);
        bar_arrive(bar_empty(1), CTA_THREADS);
        for (int it = 0; it < iters; ++it) {
            const int b = it & 1;
            bar_sync(bar_full(b), CTA_THREADS);
            acc = acc * buf[b][tid] + buf[b][(tid + 1) % ELEMS];
            if (it + 2 < iters)
                bar_arrive(bar_empty(b), CTA_THREADS);
        }
        out[blockIdx.x * COMPUTE_THREADS + tid] = acc;
    } else {
        const int d = tid - COMPUTE_THREADS;
        for (int it = 0; it < iters; ++it) {
            const int b = it & 1;
            bar_sync(bar_empty(b), CTA_THREADS);
            for (int e = d; e < ELEMS; e += DMA_THREADS)
                buf[b][e] = in[(blockIdx.x * iters + it) * ELEMS + e];
            bar_arrive(bar_full(b), CTA_THREADS);
        }
    }
}
