// A Hopper-style GEMM mainloop written with inline PTX: a TMA producer warpgroup fills a
// two-stage ring of A and B tiles (each tile its own TMA load and full mbarrier), a wgmma
// consumer warpgroup multiplies them (wgmma.mma_async reads A and B through 128-byte
// swizzled K-major matrix descriptors), and the empty mbarrier of a stage releases it back
// to the producer.  Four k-blocks, so each stage is refilled once.
//
// wgmma.mma_async reads its shared operands asynchronously: from its issue until the
// wgmma.wait_group that retires its group.  A stage may only be released after that wait.
//
// Kernels (each a manifest entry):
//   wgmma_pipeline_all_release    every consumer thread arrives on the empty barrier (count
//                                 128) after wgmma.wait_group 0, as CUTLASS's
//                                 PipelineTmaAsync does in a one-CTA cluster.  Verified.
//   wgmma_pipeline_elected_release  one elected consumer thread arrives (count 1) after its
//                                 wgmma.wait_group 0, as the CuTe DSL pipelines do.  The
//                                 wgmma is one warpgroup operation: every warp's wait returns
//                                 after it ran, so the release orders all its reads.
//                                 Verified.
//   wgmma_pipeline_early_release  the same as the first, but the consumers arrive on the
//                                 empty barrier BEFORE wgmma.wait_group: the producer's next
//                                 TMA load into the stage races with the wgmma still reading
//                                 it.  Race.
// Launch: 256 threads (warpgroup 0 produces, warpgroup 1 consumes).  Compile: compute_90a.
#include <cstdint>

struct alignas(64) TensorMap {
    unsigned char bytes[128];
};

constexpr int STAGES = 2;
constexpr int KBLOCKS = 4;
constexpr uint32_t TILE_BYTES = 64 * 64 * 2;  // 64 rows x 64 bf16 of K, 128-byte rows

struct __align__(1024) Smem {
    unsigned char a[STAGES][TILE_BYTES];
    unsigned char b[STAGES][TILE_BYTES];
    uint64_t full_a[STAGES];
    uint64_t full_b[STAGES];
    uint64_t empty[STAGES];
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

// A K-major operand with 128-byte swizzle: 8-row groups 1024 bytes apart (SBO), LBO unused
// (1), swizzle mode 1 in bits 62-63.
__device__ __forceinline__ uint64_t desc_sw128(const void *tile) {
    uint64_t d = (smem_addr(tile) & 0x3FFFF) >> 4;
    d |= uint64_t(1) << 16;
    d |= uint64_t(1024 >> 4) << 32;
    d |= uint64_t(1) << 62;
    return d;
}

// One k-block: four m64n64k16 wgmmas, each on the next 32 bytes of K of every row (the
// descriptor's start address advances by 32 bytes).
__device__ __forceinline__ void mma_kblock(float (&acc)[32], uint64_t da, uint64_t db) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        uint64_t a = da + 2 * k, b = db + 2 * k;
        asm volatile(
            "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 1, 0;\n\t"
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
            "%32, %33, p, 1, 1, 0, 0;\n\t}"
            : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
              "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
              "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
              "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
              "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
              "+f"(acc[30]), "+f"(acc[31])
            : "l"(a), "l"(b)
            : "memory");
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_wait0() {
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

enum class Release { AllAfterWait, ElectedAfterWait, AllBeforeWait };

template <Release R>
__device__ __forceinline__ void pipeline(Smem &s, const TensorMap &map_a, const TensorMap &map_b, float *out) {
    const int t = threadIdx.x;
    if (t == 0) {
        for (int i = 0; i < STAGES; ++i) {
            mbar_init(&s.full_a[i], 1);
            mbar_init(&s.full_b[i], 1);
            mbar_init(&s.empty[i], R == Release::ElectedAfterWait ? 1 : 128);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (t < 128) {
        // Producer: warp 0 lane 0 issues the loads of every k-block.
        if (t == 0) {
            for (int kb = 0; kb < KBLOCKS; ++kb) {
                const int st = kb % STAGES;
                if (kb >= STAGES)
                    mbar_wait(&s.empty[st], ((kb / STAGES) - 1) & 1);
                mbar_expect(&s.full_a[st], TILE_BYTES);
                tma_load(s.a[st], &map_a, kb * 64, blockIdx.x * 64, &s.full_a[st]);
                mbar_expect(&s.full_b[st], TILE_BYTES);
                tma_load(s.b[st], &map_b, kb * 64, blockIdx.y * 64, &s.full_b[st]);
            }
        }
    } else {
        // Consumer warpgroup.
        float acc[32] = {};
        for (int kb = 0; kb < KBLOCKS; ++kb) {
            const int st = kb % STAGES;
            const uint32_t parity = (kb / STAGES) & 1;
            mbar_wait(&s.full_a[st], parity);
            mbar_wait(&s.full_b[st], parity);
            mma_kblock(acc, desc_sw128(s.a[st]), desc_sw128(s.b[st]));
            if (R == Release::AllBeforeWait)
                mbar_arrive(&s.empty[st]);
            wgmma_wait0();
            if (R == Release::AllAfterWait)
                mbar_arrive(&s.empty[st]);
            if (R == Release::ElectedAfterWait && t == 128)
                mbar_arrive(&s.empty[st]);
        }
        for (int i = 0; i < 32; ++i)
            out[(t - 128) * 32 + i] = acc[i];
    }
}

__global__ void __launch_bounds__(256) wgmma_pipeline_all_release(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    __shared__ Smem s;
    pipeline<Release::AllAfterWait>(s, map_a, map_b, out);
}

__global__ void __launch_bounds__(256) wgmma_pipeline_elected_release(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    __shared__ Smem s;
    pipeline<Release::ElectedAfterWait>(s, map_a, map_b, out);
}

__global__ void __launch_bounds__(256) wgmma_pipeline_early_release(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *__restrict__ out) {
    __shared__ Smem s;
    pipeline<Release::AllBeforeWait>(s, map_a, map_b, out);
}
