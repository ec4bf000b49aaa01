// TMA tensor loads whose bytes the issuing code announces in unusual places, written with
// inline PTX.  The byte count of a TMA load lives in the tensor map (a kernel parameter weft
// cannot read); weft assumes the copies issued towards an mbarrier phase together transfer
// the bytes that phase expects, wherever the expect_tx that announces them is.
//
// Kernels (each a manifest entry):
//   tma_copies_before_expect_tx  DeepGEMM's order: warp 1 lane 0 issues the two copies of a
//                                stage (A then B, adjacent tiles) and only then arrives with
//                                expect_tx of their 256 bytes on the full barrier; warp 0 waits
//                                and reads both tiles.  Verified.
//   tma_copies_across_barrier    Triton's warp-specialized order: warp 1 lane 1 announces the
//                                bytes, lane 0 issues copy A, the warp meets at bar.sync 1, 32,
//                                then lane 0 issues copy B.  Verified.
// Launch: 64 threads.  Compile: compute_90.
#include <cstdint>

struct alignas(64) TensorMap {
    unsigned char bytes[128];
};

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_expect(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
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
__device__ __forceinline__ void tma_load(void *dst, const TensorMap *map, int x, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                 ::"r"(smem_addr(dst)), "l"(map), "r"(x), "r"(smem_addr(bar))
                 : "memory");
}

__global__ void __launch_bounds__(64) tma_copies_before_expect_tx(const __grid_constant__ TensorMap map, float *__restrict__ out) {
    __shared__ __align__(128) float tiles[2][32];
    __shared__ __align__(8) uint64_t full;
    const int t = threadIdx.x;
    if (t == 0)
        mbar_init(&full, 1);
    __syncthreads();
    if (t == 32) {
        tma_load(tiles[0], &map, 0, &full);
        tma_load(tiles[1], &map, 32, &full);
        mbar_expect(&full, 256);
    } else if (t < 32) {
        mbar_wait(&full, 0);
        out[t] = tiles[0][t] * tiles[1][31 - t];
    }
}

__global__ void __launch_bounds__(64) tma_copies_across_barrier(const __grid_constant__ TensorMap map, float *__restrict__ out) {
    __shared__ __align__(128) float tiles[2][32];
    __shared__ __align__(8) uint64_t full;
    const int t = threadIdx.x;
    if (t == 0)
        mbar_init(&full, 1);
    __syncthreads();
    if (t >= 32) {
        if (t == 33)
            mbar_expect(&full, 256);
        if (t == 32)
            tma_load(tiles[0], &map, 0, &full);
        asm volatile("bar.sync 1, 32;" ::: "memory");
        if (t == 32)
            tma_load(tiles[1], &map, 32, &full);
    } else {
        mbar_wait(&full, 0);
        out[t] = tiles[0][t] * tiles[1][31 - t];
    }
}
