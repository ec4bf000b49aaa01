// cp.async (Ampere LDGSTS) pipelines, written with inline PTX so the instructions are
// exactly the ones named.  A cp.async writes shared memory at an unknown time between its
// issue and the operation that completes it: `cp.async.wait_group N` / `wait_all` in the
// issuing thread, or the mbarrier arrive-on of `cp.async.mbarrier.arrive`.  `bar.sync`
// completes nothing.
//
// Kernels (each a manifest entry):
//   cp_async_pipeline   double-buffered: load tile i+1 while tile i is read; wait_group 1,
//                       then wait_group 0 for the last tile; __syncthreads.  Verified.
//   cp_async_no_wait    the same without any wait_group: the reads after __syncthreads race
//                       with copies still in flight.  Race.
//   cp_async_wait_one   wait_group 1 every iteration, also the last one, which commits no
//                       new group: the last tile is still in flight.  Race.
//   cp_async_mbarrier   every thread copies one element and signals an mbarrier with
//                       cp.async.mbarrier.arrive.noinc; all wait on its phase 0, then read
//                       a neighbour's element.  Verified.
// Launch: 128 threads.  Compile: compute_90 (mbarrier.try_wait needs sm_90).  Expected: see above.
#include <cstdint>
#define TILES 4

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async4(void *dst, const void *src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_group() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

__global__ void __launch_bounds__(128) cp_async_pipeline(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float buf[2][128];
    const int t = threadIdx.x;
    float acc = 0.0f;
    cp_async4(&buf[0][t], &in[t]);
    commit();
    for (int i = 0; i < TILES; ++i) {
        if (i + 1 < TILES) {
            cp_async4(&buf[(i + 1) % 2][t], &in[(i + 1) * 128 + t]);
            commit();
            wait_group<1>();
        } else {
            wait_group<0>();
        }
        __syncthreads();
        acc += buf[i % 2][(t + 1) % 128];
        __syncthreads();
    }
    out[t] = acc;
}

__global__ void __launch_bounds__(128) cp_async_no_wait(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float buf[2][128];
    const int t = threadIdx.x;
    float acc = 0.0f;
    cp_async4(&buf[0][t], &in[t]);
    commit();
    for (int i = 0; i < TILES; ++i) {
        if (i + 1 < TILES) {
            cp_async4(&buf[(i + 1) % 2][t], &in[(i + 1) * 128 + t]);
            commit();
        }
        __syncthreads();
        acc += buf[i % 2][(t + 1) % 128];
        __syncthreads();
    }
    out[t] = acc;
}

__global__ void __launch_bounds__(128) cp_async_wait_one(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float buf[2][128];
    const int t = threadIdx.x;
    float acc = 0.0f;
    cp_async4(&buf[0][t], &in[t]);
    commit();
    for (int i = 0; i < TILES; ++i) {
        if (i + 1 < TILES) {
            cp_async4(&buf[(i + 1) % 2][t], &in[(i + 1) * 128 + t]);
            commit();
        }
        wait_group<1>();
        __syncthreads();
        acc += buf[i % 2][(t + 1) % 128];
        __syncthreads();
    }
    out[t] = acc;
}

__global__ void __launch_bounds__(128) cp_async_mbarrier(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(8) uint64_t bar;
    __shared__ float buf[128];
    const int t = threadIdx.x;
    if (t == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&bar)), "r"(128) : "memory");
    __syncthreads();
    cp_async4(&buf[t], &in[t]);
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(&bar)) : "memory");
    asm volatile("{\n\t"
                 ".reg .pred P1;\n"
                 "LAB_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
                 "@P1 bra DONE;\n\t"
                 "bra LAB_WAIT;\n"
                 "DONE:\n\t"
                 "}" ::"r"(smem_addr(&bar)),
                 "r"(0)
                 : "memory");
    out[t] = buf[(t + 1) % 128];
}
