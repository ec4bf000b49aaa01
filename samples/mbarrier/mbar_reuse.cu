// The storage of an mbarrier ring reused as a staging buffer (the pattern of a kernel whose
// shared storage is a union of the mainloop's barriers and the epilogue's buffers).  A
// 2-stage full/empty ring moves 4 tiles from warp 1 to warp 0 (as mbar_pipeline.cu); then
// both warps write their partial results into `stage`, which overlays the barriers, and
// warp 0 adds them.  The PTX ISA (mbarrier.inval) requires an mbarrier object to be
// invalidated before its memory is used for any other purpose.
//   reuse<false>: no mbarrier.inval before the stores: mbarrier-reused.
//   reuse<true>:  thread 0 invalidates the four objects between two __syncthreads: verified.
// Launch: 64 threads (2 warps).  Compile: compute_90.
#include <cstdint>
#define STAGES 2
#define ITERS 4

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_inval(uint64_t *bar) {
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
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

struct Barriers {
    uint64_t full[STAGES];
    uint64_t empty[STAGES];
};

template <bool INVAL>
__global__ void __launch_bounds__(64) reuse(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(16) union {
        Barriers bars;
        float stage[64];
    } u;
    __shared__ float ring[STAGES][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&u.bars.full[s], 32);
            mbar_init(&u.bars.empty[s], 32);
        }
    }
    __syncthreads();
    float acc = 0.0f;
    if (warp == 1) {                                  // producer
        for (int i = 0; i < ITERS; ++i) {
            const int s = i % STAGES;
            if (i >= STAGES)
                mbar_wait(&u.bars.empty[s], ((i / STAGES) - 1) & 1);
            ring[s][lane] = in[(blockIdx.x * ITERS + i) * 32 + lane];
            acc += ring[s][lane];
            mbar_arrive(&u.bars.full[s]);
        }
    } else {                                          // consumer
        for (int i = 0; i < ITERS; ++i) {
            const int s = i % STAGES;
            mbar_wait(&u.bars.full[s], (i / STAGES) & 1);
            acc += ring[s][lane] * ring[s][31 - lane];
            if (i + STAGES < ITERS)
                mbar_arrive(&u.bars.empty[s]);
        }
    }
    __syncthreads();
    if (INVAL) {
        if (threadIdx.x == 0) {
            for (int s = 0; s < STAGES; ++s) {
                mbar_inval(&u.bars.full[s]);
                mbar_inval(&u.bars.empty[s]);
            }
        }
        __syncthreads();
    }
    u.stage[threadIdx.x] = acc;
    __syncthreads();
    if (warp == 0)
        out[blockIdx.x * 32 + lane] = u.stage[lane] + u.stage[32 + lane];
}

template __global__ void reuse<false>(const float *, float *);
template __global__ void reuse<true>(const float *, float *);
