// Bulk asynchronous reductions into global memory (`cp.reduce.async.bulk.global.shared::cta
// .bulk_group.add.f32`, FlashAttention-4's dQ accumulation), written with inline PTX. For
// shared memory a bulk reduction is a bulk store: it reads its shared source through the
// async proxy from its issue until `cp.async.bulk.wait_group.read` retires its bulk group in
// the issuing thread (the reduction itself happens in global memory).
//
//   bulk_reduce_ok         threads fill a tile, fence.proxy.async, __syncthreads; thread 0
//                          adds it into global memory with a bulk reduction and waits
//                          (wait_group.read 0) before the CTA refills the tile.  Launch 32.
//   bulk_reduce_overwrite  the same, but thread 0 waits only after the tile was refilled: a
//                          race between the reduction's read and the refill.  Launch 32.
//
// Compile: compute_90.
#include <cstdint>

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bulk_reduce_add(float *dst, const float *src, uint32_t bytes) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                 ::"l"(dst), "r"(smem_addr(src)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

__global__ void __launch_bounds__(32) bulk_reduce_ok(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t] * 2.0f;
    fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        bulk_reduce_add(out, tile, 128);
        bulk_wait_read();
    }
    __syncthreads();
    tile[t] = in[32 + t];
    __syncthreads();
    out[32 + t] = tile[(t + 1) % 32];
}

__global__ void __launch_bounds__(32) bulk_reduce_overwrite(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t] * 2.0f;
    fence_proxy_async();
    __syncthreads();
    if (t == 0)
        bulk_reduce_add(out, tile, 128);
    __syncthreads();
    tile[t] = in[32 + t];
    if (t == 0)
        bulk_wait_read();
    __syncthreads();
    out[32 + t] = tile[(t + 1) % 32];
}
