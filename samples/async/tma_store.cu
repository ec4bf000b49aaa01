// TMA tensor stores (`cp.async.bulk.tensor` shared -> global), written with inline PTX.  The
// store's extent lives in the tensor map (a kernel parameter weft cannot read), so weft
// records its read of the source tile as an upper bound, plus the 16 bytes at the source that
// every TMA box reads for sure.  The read lasts from the issue until the issuing thread's
// `cp.async.bulk.wait_group.read` retires its bulk group.
//
// Kernels (each a manifest entry):
//   tma_store_ok         the threads fill a tile, fence.proxy.async, __syncthreads; thread 0
//                        stores it and waits (wait_group.read 0) before the __syncthreads after
//                        which the tile is overwritten.  Verified.
//   tma_store_overwrite  thread 0 waits only after the others overwrote the tile: the writes of
//                        the first 16 bytes race with the store's read.  Race.
// Launch: 32 threads.  Compile: compute_90.
#include <cstdint>

struct alignas(64) TensorMap {
    unsigned char bytes[128];
};

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void tma_store(const TensorMap *map, const void *src, int x) {
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];"
                 ::"l"(map), "r"(x), "r"(smem_addr(src))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

__global__ void __launch_bounds__(32) tma_store_ok(const __grid_constant__ TensorMap map, const float *__restrict__ in) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t];
    fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        tma_store(&map, tile, 0);
        wait_read();
    }
    __syncthreads();
    tile[t] = in[32 + t];
    fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        tma_store(&map, tile, 32);
        wait_read();
    }
}

__global__ void __launch_bounds__(32) tma_store_overwrite(const __grid_constant__ TensorMap map, const float *__restrict__ in) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t];
    fence_proxy_async();
    __syncthreads();
    if (t == 0)
        tma_store(&map, tile, 0);
    __syncthreads();
    tile[t] = in[32 + t];
    fence_proxy_async();
    if (t == 0)
        wait_read();
    __syncthreads();
    if (t == 0) {
        tma_store(&map, tile, 32);
        wait_read();
    }
}
