// A Hopper-style GEMM mainloop reduced to its synchronization: a TMA producer warp fills a
// 2-stage full/empty mbarrier ring, a consumer warpgroup multiplies each stage with
// wgmma.mma_async, and one thread of the warpgroup releases the stage after
// wgmma.wait_group.  Written with inline PTX (wgmma needs sm_90a).
//
// Shared tiles per stage: A 64x16 fp16 (2048 bytes), B 8x16 fp16 (256 bytes), both K-major
// without swizzle: 8x8 core matrices of 128 contiguous bytes, the two along K 128 bytes
// apart (leading byte offset), the next 8 rows 256 bytes on (stride byte offset).
//
// Kernels (each a manifest entry):
//   wgmma_consumer_release   Warp 0 produces (all lanes wait on the empty barrier, one
//                            elected lane announces 2304 bytes and issues both copies);
//                            warpgroup 1 (threads 128-255) waits on the full barrier in all
//                            128 threads, issues one m64n8k16 wgmma, commits, waits for it
//                            (wait_group 0), and thread 128 alone arrives on the empty
//                            barrier (count 1).  Verified: the wgmma runs only once all
//                            four warps issued it and thread 128's wait_group returns only
//                            after it ran, so every consumer thread's full wait happens
//                            before the release, and no wait can observe a later phase.
//   wgmma_skipped_wait       The same, but warp 7 does not execute wgmma.wait_group.  The
//                            wgmma instructions are .sync.aligned over the warpgroup: all
//                            its threads must execute the same ones (undefined otherwise),
//                            so this is reported (barrier-divergence).
//   wgmma_skipped_mma        The same, but warp 7 does not issue the wgmma.mma_async: also
//                            barrier-divergence.  (On hardware the operation never starts
//                            and warps 4-6 wait in wait_group forever.)
// Launch: 256 threads.  Compile: compute_90a.
#include <cstdint>

struct alignas(64) TensorMap {
    unsigned char bytes[128];
};

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
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
__device__ __forceinline__ bool elect_one() {
    uint32_t elected;
    asm volatile("{\n\t"
                 ".reg .pred P;\n\t"
                 "elect.sync _|P, 0xffffffff;\n\t"
                 "selp.u32 %0, 1, 0, P;\n\t"
                 "}"
                 : "=r"(elected)
                 :
                 : "memory");
    return elected != 0;
}
__device__ __forceinline__ void tma_load(void *dst, const TensorMap *map, int x, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                 ::"r"(smem_addr(dst)), "l"(map), "r"(x), "r"(smem_addr(bar))
                 : "memory");
}
// A K-major, unswizzled shared-memory matrix descriptor: start address, leading byte
// offset 128, stride byte offset 256 (each field in 16-byte units).
__device__ __forceinline__ uint64_t desc(const void *p) {
    return (uint64_t)((smem_addr(p) >> 4) & 0x3FFF) | ((uint64_t)(128 >> 4) << 16) |
           ((uint64_t)(256 >> 4) << 32);
}
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait0() {
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
__device__ __forceinline__ void wgmma_m64n8k16(float (&d)[4], uint64_t a, uint64_t b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
                 "{%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "l"(a), "l"(b)
                 : "memory");
}

template <bool SKIP_WAIT, bool SKIP_MMA = false>
__device__ __forceinline__ void mainloop(const TensorMap &map_a, const TensorMap &map_b, float *out) {
    __shared__ __align__(128) uint16_t a_tiles[2][64 * 16];
    __shared__ __align__(128) uint16_t b_tiles[2][8 * 16];
    __shared__ __align__(8) uint64_t full[2];
    __shared__ __align__(8) uint64_t empty[2];
    const int t = threadIdx.x;
    if (t == 0) {
        for (int s = 0; s < 2; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 1);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (t < 32) {
#pragma unroll 1
        for (int i = 0; i < 4; ++i) {
            const int s = i % 2;
            mbar_wait(&empty[s], ((i / 2) & 1) ^ 1);
            if (elect_one()) {
                mbar_expect(&full[s], 2304);
                tma_load(a_tiles[s], &map_a, 16 * i, &full[s]);
                tma_load(b_tiles[s], &map_b, 16 * i, &full[s]);
            }
        }
    } else if (t >= 128) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
        for (int i = 0; i < 4; ++i) {
            const int s = i % 2;
            mbar_wait(&full[s], (i / 2) & 1);
            wgmma_fence();
            if (!SKIP_MMA || t < 224)
                wgmma_m64n8k16(acc, desc(a_tiles[s]), desc(b_tiles[s]));
            wgmma_commit();
            if (!SKIP_WAIT || t < 224)
                wgmma_wait0();
            if (t == 128)
                mbar_arrive(&empty[s]);
        }
        for (int j = 0; j < 4; ++j)
            out[4 * (t - 128) + j] = acc[j];
    }
}

__global__ void __launch_bounds__(256) wgmma_consumer_release(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    mainloop<false>(map_a, map_b, out);
}

__global__ void __launch_bounds__(256) wgmma_skipped_wait(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    mainloop<true>(map_a, map_b, out);
}

__global__ void __launch_bounds__(256) wgmma_skipped_mma(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    mainloop<false, true>(map_a, map_b, out);
}
