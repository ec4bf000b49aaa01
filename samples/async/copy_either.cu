// A row copied by `cp.async` from one of two sources, or zero-filled by a `cp.async` whose
// source size is 0 (CUTLASS's `SM80_CP_ASYNC_CACHEGLOBAL_ZFILL`): both sides of an
// input-dependent if/else issue a copy of the same row.  With the bound unknown weft ran both
// sides one after the other in the thread's program, so the first side's copy was still in
// flight during the second's, and it reported the two sides of one if/else as a race.  The
// program now records that the first side's copies never run alongside the second side.
//
//   copy_either          wait_group 0 and __syncthreads before the neighbour's row is read.
//                        Verified for every n.  Launch 32.
//   copy_either_no_wait  the same without the wait: the copy may still be writing the row
//                        the neighbour reads.  Race.  Launch 32.
//   copy_either_spill    the zero-filling side also clears a word of the next row: thread 31
//                        (t >= n) clears row 0 while thread 0 (t < n) copies into it when
//                        1 <= n <= 31.  Race (weft names the instruction pair; its example
//                        pair of lanes is the lowest it tested, not necessarily one input
//                        reaches).  Launch 32.
//
// Compile: compute_80.
#include <cstdint>

__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
                 "l"(src)
                 : "memory");
}
__device__ __forceinline__ void cp_async16_zfill(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 0;" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
                 "l"(src)
                 : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

__global__ void __launch_bounds__(32) copy_either(const float4 *__restrict__ src, float *__restrict__ dst, int n) {
    __shared__ __align__(16) float4 rows[32];
    const int t = threadIdx.x;
    if (t < n)
        cp_async16(&rows[t], &src[t]);
    else
        cp_async16_zfill(&rows[t], src);
    commit();
    wait_all();
    __syncthreads();
    dst[t] = rows[(t + 1) % 32].x;
}

__global__ void __launch_bounds__(32) copy_either_no_wait(const float4 *__restrict__ src, float *__restrict__ dst, int n) {
    __shared__ __align__(16) float4 rows[32];
    const int t = threadIdx.x;
    if (t < n)
        cp_async16(&rows[t], &src[t]);
    else
        cp_async16_zfill(&rows[t], src);
    commit();
    __syncthreads();
    dst[t] = rows[(t + 1) % 32].x;
    wait_all();
}

__global__ void __launch_bounds__(32) copy_either_spill(const float4 *__restrict__ src, float *__restrict__ dst, int n) {
    __shared__ __align__(16) float4 rows[32];
    const int t = threadIdx.x;
    if (t < n) {
        cp_async16(&rows[t], &src[t]);
    } else {
        cp_async16_zfill(&rows[t], src);
        rows[(t + 1) % 32].y = 0.0f;
    }
    commit();
    wait_all();
    __syncthreads();
    dst[t] = rows[(t + 1) % 32].x;
}
