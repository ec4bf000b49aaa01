// Reduced from CUTLASS example 77 (Sm100FmhaLoadTmaWarpspecialized::load): all 32 lanes of the
// producer warp call pipeline.producer_acquire (wait on the empty barrier), the leader lane
// (cute::elect_one_sync() computed ONCE before the loop) arrives with expect_tx and issues the
// TMA copy. Same as weft's samples/collectives/elect_producer.cu except that the elect.sync
// is hoisted out of the loop (so no .sync collective separates the iterations).
//
// Without --warp-sync: mbarrier-phase-race (lanes 1-31's waits are ordered before nothing
// the consumers do: PTX does not promise the warp reconverges after `if (leader)`,
// docs/semantics.md §4.4). With --warp-sync (lock-step, minimum-PC reconvergence): verified,
// since a lane's wait runs before its leader's later arrival, which the consumers' release
// follows. Launch 64 threads. Compile: compute_90.
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

__global__ void __launch_bounds__(64) hoisted_leader(const __grid_constant__ TensorMap map, float *__restrict__ out) {
    __shared__ __align__(128) float tiles[2][32];
    __shared__ __align__(8) uint64_t full[2];
    __shared__ __align__(8) uint64_t empty[2];
    const int t = threadIdx.x;
    if (t == 0) {
        for (int s = 0; s < 2; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 32);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (t >= 32) {
        // CUTLASS example 77 style: the leader is elected once, before the loop.
        const bool leader = elect_one();
#pragma unroll 1
        for (int i = 0; i < 4; ++i) {
            const int s = i % 2;
            // Stage s is free once the consumer released its previous fill; a fresh
            // barrier's wait for parity 1 returns at once.
            mbar_wait(&empty[s], ((i / 2) & 1) ^ 1);
            if (leader) {
                mbar_expect(&full[s], 128);
                tma_load(tiles[s], &map, 32 * i, &full[s]);
            }
        }
    } else {
        float acc = 0.0f;
#pragma unroll 1
        for (int i = 0; i < 4; ++i) {
            const int s = i % 2;
            mbar_wait(&full[s], (i / 2) & 1);
            acc += tiles[s][t];
            mbar_arrive(&empty[s]);
        }
        out[t] = acc;
    }
}

