// A TMA producer warp in the CuTe DSL style: all 32 lanes wait on the empty barrier of a
// stage, then `elect.sync` picks one lane, which alone announces the bytes on the full
// barrier and issues the copy.  Written with inline PTX.
//
// Kernel elect_producer: warp 1 produces, warp 0 consumes, a 2-stage full/empty mbarrier
// ring over 4 iterations (full: 1 arrival + 128 transaction bytes; empty: 32 arrivals, one
// per consumer lane).  Verified: `elect.sync` makes every lane of the producer wait for the
// others, so every lane's empty wait happens before the elected lane's arrival, which the
// consumer's release of the stage (the next phase of the empty barrier) needs.  Without
// that rendezvous, lanes 1-31's waits could start after the release and wait for the next
// phase of the same parity instead (an mbarrier phase race).
//
// Kernel elect_producer_lane_write: the same ring, but producer lane 1 (not the elected
// lane) also stores the iteration number into a shared word of the stage before the
// `elect.sync`, and the consumer reads it after its full wait.  A race: the rendezvous
// orders when the lanes run, not memory (PTX promises memory ordering for bar.warp.sync,
// not for elect.sync), and only the elected lane's arrival releases to the consumer.
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

__global__ void __launch_bounds__(64) elect_producer(const __grid_constant__ TensorMap map, float *__restrict__ out) {
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
#pragma unroll 1
        for (int i = 0; i < 4; ++i) {
            const int s = i % 2;
            // Stage s is free once the consumer released its previous fill; a fresh
            // barrier's wait for parity 1 returns at once.
            mbar_wait(&empty[s], ((i / 2) & 1) ^ 1);
            if (elect_one()) {
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

__global__ void __launch_bounds__(64) elect_producer_lane_write(const __grid_constant__ TensorMap map, float *__restrict__ out) {
    __shared__ __align__(128) float tiles[2][32];
    __shared__ int tags[2];
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
#pragma unroll 1
        for (int i = 0; i < 4; ++i) {
            const int s = i % 2;
            mbar_wait(&empty[s], ((i / 2) & 1) ^ 1);
            if (t == 33)
                tags[s] = i;
            if (elect_one()) {
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
            acc += tiles[s][t] * tags[s];
            mbar_arrive(&empty[s]);
        }
        out[t] = acc;
    }
}
