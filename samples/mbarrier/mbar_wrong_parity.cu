// mbarrier waited with the wrong parity: the producer warp fills a buffer and arrives on
// `full` (32 arrivals complete phase 0, the barrier moves to phase 1); after a
// __syncthreads() the consumer waits with parity (i+1)&1 = 1 instead of i&1 = 0, i.e. for
// the completion of phase 1, which never comes: the producer is already blocked in the
// second __syncthreads() waiting for the consumer.  Deadlock in every execution (the
// first __syncthreads() guarantees phase 0 has completed before the wait starts).
// Launch: 64 threads (2 warps).  Compile: compute_90.  Expected: violation (deadlock).
#include <cstdint>

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
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

__global__ void __launch_bounds__(64) mbar_wrong_parity(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(8) uint64_t full;
    __shared__ float buf[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0)
        mbar_init(&full, 32);
    __syncthreads();
    float acc = 0.0f;
    for (int i = 0; i < 2; ++i) {
        if (warp == 1) {
            buf[lane] = in[(blockIdx.x * 2 + i) * 32 + lane];
            mbar_arrive(&full);
        }
        __syncthreads();
        if (warp == 0) {
            mbar_wait(&full, (i + 1) & 1);            // BUG: should be i & 1
            acc += buf[lane];
        }
        __syncthreads();
    }
    if (warp == 0)
        out[blockIdx.x * 32 + lane] = acc;
}
