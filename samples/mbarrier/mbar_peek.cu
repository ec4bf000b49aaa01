// CUTLASS's two-step mbarrier wait (PipelineTmaAsync::consumer_try_wait, then
// consumer_wait(token)): a *peek* (`mbarrier.try_wait.parity` once, no retry) and, only when it
// answers "not ready", a blocking retry loop.  Warp 0 writes a row and arrives on `full`
// (32 arrivals); warp 1 waits for phase 0 that way and reads the row.  On hardware the peek
// answers "not ready" whenever warp 0 is late, so the fallback runs in some executions and
// not in others: weft runs such kernels twice, peeks waiting for their phase and peeks
// answering "not ready" at once.
//
//   mbar_peek          peek and fallback both wait for parity 0.  Verified.
//   mbar_peek_bad_fallback
//                      the fallback waits for parity 1, which is "ready" while phase 0 is
//                      incomplete: when the peek fails, warp 1 reads the row while warp 0 may
//                      still write it.  A race (weft said verified: it modelled the peek as
//                      waiting, so the fallback never ran).
//
// Launch: 64 threads (2 warps).  Compile: compute_90.
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
// One try_wait, no retry: its answer as 0 or 1.
__device__ __forceinline__ uint32_t mbar_peek(uint64_t *bar, uint32_t parity) {
    uint32_t ready;
    asm volatile("{\n\t"
                 ".reg .pred P1;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%1], %2;\n\t"
                 "selp.b32 %0, 1, 0, P1;\n\t"
                 "}"
                 : "=r"(ready)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
    return ready;
}
// The retry loop (CUTLASS's ClusterBarrier::wait).
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

template <uint32_t FALLBACK_PARITY>
__device__ void peek_then_wait(float *out) {
    __shared__ __align__(8) uint64_t full;
    __shared__ float row[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        mbar_init(&full, 32);
    }
    __syncthreads();
    if (warp == 0) {
        row[lane] = float(lane);
        mbar_arrive(&full);
    } else {
        if (!mbar_peek(&full, 0)) {
            mbar_wait(&full, FALLBACK_PARITY);
        }
        out[lane] = row[31 - lane];
    }
}

__global__ void __launch_bounds__(64) mbar_peek(float *out) { peek_then_wait<0>(out); }
__global__ void __launch_bounds__(64) mbar_peek_bad_fallback(float *out) { peek_then_wait<1>(out); }
