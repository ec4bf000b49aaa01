// A Blackwell-style GEMM mainloop written with inline PTX: warp 0 lane 0 fills a two-stage
// ring of A and B tiles (64 x 64 bf16 each) with TMA loads (one full mbarrier per
// tile), warp 1 allocates the accumulator in tensor memory and its lane 0 issues
// tcgen05.mma (four k-slices per k-block, operands through 128-byte swizzled K-major shared
// memory descriptors), and warps 2-3 wait for the accumulator, then reuse stage 0's A tile
// as scratch.  Four k-blocks, so each stage is refilled once.
//
// tcgen05.mma reads its shared operands asynchronously; tcgen05.commit makes an mbarrier
// track the completion of every earlier tcgen05 operation of the thread, and performs its
// arrive-on only then.
//
// Kernels (each a manifest entry):
//   tcgen05_pipeline_commit_release  the MMA thread releases each stage with tcgen05.commit
//                                    on the stage's empty barrier, and signals the
//                                    accumulator with a last commit.  Verified.
//   tcgen05_pipeline_early_release   the MMA thread releases each stage with a plain
//                                    mbarrier.arrive right after issuing the MMAs: the
//                                    producer's refill races with the MMAs still reading the
//                                    stage.  Race.
//   tcgen05_pipeline_no_dealloc      the commit-release pipeline whose warp 1 never
//                                    deallocates its 64 tensor-memory columns: all tensor
//                                    memory must be deallocated before the kernel exits.
//                                    Tensor-memory violation.
// Launch: 128 threads.  Compile: compute_100a.
#include <cstdint>

struct alignas(64) TensorMap {
    unsigned char bytes[128];
};

constexpr int STAGES = 2;
constexpr int KBLOCKS = 4;
constexpr uint32_t A_BYTES = 64 * 64 * 2;
constexpr uint32_t B_BYTES = 64 * 64 * 2;

struct __align__(1024) Smem {
    unsigned char a[STAGES][A_BYTES];
    unsigned char b[STAGES][B_BYTES];
    uint64_t full_a[STAGES];
    uint64_t full_b[STAGES];
    uint64_t empty[STAGES];
    uint64_t acc_full;
    uint32_t tmem_base;
};

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
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
__device__ __forceinline__ void tma_load(void *dst, const TensorMap *map, int x, int y, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(smem_addr(dst)), "l"(map), "r"(x), "r"(y), "r"(smem_addr(bar))
                 : "memory");
}

// tcgen05 shared memory descriptor of a K-major operand with 128-byte swizzle: 8-row
// groups 1024 bytes apart (SBO), LBO unused (1), version 1 (bits 46-48), swizzle mode 2
// (bits 61-63).
__device__ __forceinline__ uint64_t desc_sw128(const void *tile) {
    uint64_t d = (smem_addr(tile) & 0x3FFFF) >> 4;
    d |= uint64_t(1) << 16;
    d |= uint64_t(1024 >> 4) << 32;
    d |= uint64_t(1) << 46;
    d |= uint64_t(2) << 61;
    return d;
}

// Instruction descriptor, kind::f16: D f32, A and B bf16, both K-major, N = 64, M = 64.
constexpr uint32_t IDESC = (1u << 4) | (1u << 7) | (1u << 10) | ((64u >> 3) << 17) | ((64u >> 4) << 24);

__device__ __forceinline__ void mma(uint32_t tmem, uint64_t a, uint64_t b, uint32_t accumulate) {
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}"
                 ::"r"(tmem), "l"(a), "l"(b), "r"(IDESC), "r"(accumulate)
                 : "memory");
}
__device__ __forceinline__ void commit(uint64_t *bar) {
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                 ::"r"(smem_addr(bar))
                 : "memory");
}

template <bool CommitRelease, bool Dealloc = true>
__device__ __forceinline__ void pipeline(Smem &s, const TensorMap &map_a, const TensorMap &map_b, float *out) {
    const int t = threadIdx.x;
    const int warp = t / 32;
    if (t == 0) {
        for (int i = 0; i < STAGES; ++i) {
            mbar_init(&s.full_a[i], 1);
            mbar_init(&s.full_b[i], 1);
            mbar_init(&s.empty[i], 1);
        }
        mbar_init(&s.acc_full, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if (warp == 1) {
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 64;"
                     ::"r"(smem_addr(&s.tmem_base))
                     : "memory");
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
    }
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    const uint32_t tmem = s.tmem_base;
    if (t == 0) {
        // Producer.
        for (int kb = 0; kb < KBLOCKS; ++kb) {
            const int st = kb % STAGES;
            if (kb >= STAGES)
                mbar_wait(&s.empty[st], ((kb / STAGES) - 1) & 1);
            mbar_expect(&s.full_a[st], A_BYTES);
            tma_load(s.a[st], &map_a, kb * 64, blockIdx.x * 64, &s.full_a[st]);
            mbar_expect(&s.full_b[st], B_BYTES);
            tma_load(s.b[st], &map_b, kb * 64, blockIdx.y * 64, &s.full_b[st]);
        }
    } else if (t == 32) {
        // MMA issuer.
        for (int kb = 0; kb < KBLOCKS; ++kb) {
            const int st = kb % STAGES;
            const uint32_t parity = (kb / STAGES) & 1;
            mbar_wait(&s.full_a[st], parity);
            mbar_wait(&s.full_b[st], parity);
            asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
            const uint64_t da = desc_sw128(s.a[st]), db = desc_sw128(s.b[st]);
#pragma unroll
            for (int k = 0; k < 4; ++k)
                mma(tmem, da + 2 * k, db + 2 * k, kb > 0 || k > 0);
            if (CommitRelease)
                commit(&s.empty[st]);
            else
                mbar_arrive(&s.empty[st]);
        }
        commit(&s.acc_full);
    } else if (warp >= 2) {
        // Epilogue: once the accumulator is complete, stage 0's A tile is scratch.
        mbar_wait(&s.acc_full, 0);
        asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
        float *scratch = reinterpret_cast<float *>(s.a[0]);
        scratch[t - 64] = float(t);
        asm volatile("bar.sync 1, 64;" ::: "memory");
        out[t - 64] = scratch[127 - t];
    }
    if (warp == 1) {
        mbar_wait(&s.acc_full, 0);
        if (Dealloc)
            asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 64;" ::"r"(tmem) : "memory");
    }
}

__global__ void __launch_bounds__(128) tcgen05_pipeline_commit_release(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    __shared__ Smem s;
    pipeline<true>(s, map_a, map_b, out);
}

__global__ void __launch_bounds__(128) tcgen05_pipeline_early_release(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    __shared__ Smem s;
    pipeline<false>(s, map_a, map_b, out);
}

__global__ void __launch_bounds__(128) tcgen05_pipeline_no_dealloc(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    __shared__ Smem s;
    pipeline<true, false>(s, map_a, map_b, out);
}
