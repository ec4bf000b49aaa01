// mbarrier.init by a whole warp: the producer/consumer ring of mbar_pipeline.cu, but all 32
// lanes of warp 0 execute the `mbarrier.init` instructions (as CUTLASS does when a warp,
// not one thread, sets up its pipeline barriers).  The lanes of one warp executing one
// mbarrier.init with the same address and count initialize the object once (PTX: one
// dynamic instruction of the warp), so this is not a re-initialization.
// Launch: 64 threads (2 warps).  Compile: compute_90.  Expected: verified.
#include <cstdint>
#define STAGES 2
#define ITERS 4

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// The CUTLASS ClusterBarrier::wait idiom: a scoped retry loop around try_wait.parity.
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity) {
    asm volatile("{\n\t"
                 ".reg .pred P1;\n"
                 "LAB_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
                 "@P1 bra DONE;\n\t"
                 "bra LAB_WAIT;\n"
                 "DONE:\n\t"
                 "}" ::"r"(smem_addr(bar)),
                 "r"(parity)
                 : "memory");
}

__global__ void __launch_bounds__(64) mbar_warp_init(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(8) uint64_t full[STAGES];
    __shared__ __align__(8) uint64_t empty[STAGES];
    __shared__ float ring[STAGES][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp == 0) {                                  // all 32 lanes
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 32);
            mbar_init(&empty[s], 32);
        }
    }
    __syncthreads();
    if (warp == 1) {                                  // producer
        for (int i = 0; i < ITERS; ++i) {
            const int s = i % STAGES;
            if (i >= STAGES)
                mbar_wait(&empty[s], ((i / STAGES) - 1) & 1);
            ring[s][lane] = in[(blockIdx.x * ITERS + i) * 32 + lane];
            mbar_arrive(&full[s]);
        }
    } else {                                          // consumer
        float acc = 0.0f;
        for (int i = 0; i < ITERS; ++i) {
            const int s = i % STAGES;
            mbar_wait(&full[s], (i / STAGES) & 1);
            acc += ring[s][lane] * ring[s][31 - lane];
            if (i + STAGES < ITERS)
                mbar_arrive(&empty[s]);
        }
        out[blockIdx.x * 32 + lane] = acc;
    }
}
