// A TMA tensor store of a tile the threads wrote without `fence.proxy.async` (the first
// kernel of tma_store.cu with its first fence deleted). The store's extent lives in the tensor
// map (weft records an upper bound), but every TMA box reads its first 16 bytes for sure: the
// writes of tile[0..3] reach the async proxy's read with no fence, a `missing-proxy-fence`
// violation. weft reported it as a possible missing fence (unverifiable), because the check
// took the store's over-approximated extent for the whole instruction pair (found by a corpus
// helper mutating the CuTe DSL Blackwell FMHA).
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

__global__ void __launch_bounds__(32) tma_store_no_fence(const __grid_constant__ TensorMap map, const float *__restrict__ in) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t];
    __syncthreads();
    if (t == 0) {
        tma_store(&map, tile, 0);
        wait_read();
    }
}
