// A row copied by `cp.async` when it lies within an input-dependent bound, else zero-filled by
// a store (FlashAttention-2's `flash::copy<..., Clear_OOB_MN=true>`): with the bound unknown
// weft runs both sides of the branch, each "may happen", one after the other in the thread's
// program. The copy of the first side was still in flight during the second side's store,
// and weft reported a race between the two sides of one if/else. A side that issues copies
// now runs second when the other issues none (no synchronization lies between them, so their
// order is free).
//
//   copy_or_zero_fill          waits (wait_group 0) and __syncthreads before the neighbour's
//                              row is read.  Verified for every n.  Launch 32.
//   copy_or_zero_fill_no_wait  the same without the wait: the copy may still be writing the
//                              row the neighbour reads.  Race.  Launch 32.
//
// Compile: compute_80.
#include <cstdint>

__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
                 "l"(src)
                 : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

__global__ void __launch_bounds__(32) copy_or_zero_fill(const float4 *__restrict__ src, float *__restrict__ dst, int n) {
    __shared__ __align__(16) float4 rows[32];
    const int t = threadIdx.x;
    if (t < n)
        cp_async16(&rows[t], &src[t]);
    else
        rows[t] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    commit();
    wait_all();
    __syncthreads();
    dst[t] = rows[(t + 1) % 32].x;
}

__global__ void __launch_bounds__(32) copy_or_zero_fill_no_wait(const float4 *__restrict__ src, float *__restrict__ dst, int n) {
    __shared__ __align__(16) float4 rows[32];
    const int t = threadIdx.x;
    if (t < n)
        cp_async16(&rows[t], &src[t]);
    else
        rows[t] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    commit();
    __syncthreads();
    dst[t] = rows[(t + 1) % 32].x;
    wait_all();
}
