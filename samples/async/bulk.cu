// Bulk asynchronous copies (Hopper TMA unit, 1-D `cp.async.bulk`), written with inline PTX.
// A bulk load's shared write happens between its issue and the completion of the mbarrier
// phase its bytes complete (`mbarrier::complete_tx::bytes`): only a thread whose wait
// observed that phase is ordered after it, the issuing thread included.  A bulk store's
// read of its shared source lasts from its issue until `cp.async.bulk.wait_group.read`
// retires its bulk group in the issuing thread; the generic-proxy writes it reads must be
// followed by `fence.proxy.async` before the store.
//
// Kernels (each a manifest entry):
//   bulk_pipeline         2-stage ring with full (1 arrival + 128 transaction bytes) and
//                         empty (32 arrivals) mbarriers; warp 1 lane 0 produces with bulk
//                         copies, warp 0 consumes.  Launch 64 threads.  Verified.
//   bulk_syncthreads      thread 0 issues a bulk copy; everyone reads the destination after
//                         __syncthreads() instead of waiting on the mbarrier.  Launch 32.
//                         Race.
//   bulk_issuer_early     thread 0 reads the destination of its own bulk copy before its
//                         own mbarrier wait.  Launch 32.  Race.
//   bulk_store_ok         threads fill a tile, fence.proxy.async, __syncthreads; thread 0
//                         stores it with a bulk copy and waits (wait_group.read 0) before
//                         the __syncthreads after which the tile is overwritten.  Launch 32.
//                         Verified.
//   bulk_store_overwrite  the same, but thread 0 waits only after the tile was overwritten.
//                         Launch 32.  Race.
//   bulk_store_no_fence   bulk_store_ok without fence.proxy.async.  Launch 32.
//                         missing-proxy-fence.
// Compile: compute_90.
#include <cstdint>
#define ITERS 4

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
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
__device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}
__device__ __forceinline__ void bulk_store(void *dst, const void *src, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(dst), "r"(smem_addr(src)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

__global__ void __launch_bounds__(64) bulk_pipeline(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float ring[2][32];
    __shared__ __align__(8) uint64_t full[2];
    __shared__ __align__(8) uint64_t empty[2];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 32);
        }
        fence_init();
    }
    __syncthreads();
    if (warp == 1) {
        if (lane == 0) {
            for (int i = 0; i < ITERS; ++i) {
                const int s = i % 2;
                if (i >= 2)
                    mbar_wait(&empty[s], ((i / 2) - 1) & 1);
                mbar_expect(&full[s], 128);
                bulk_load(ring[s], in + (blockIdx.x * ITERS + i) * 32, 128, &full[s]);
            }
        }
    } else {
        float acc = 0.0f;
        for (int i = 0; i < ITERS; ++i) {
            const int s = i % 2;
            mbar_wait(&full[s], (i / 2) & 1);
            acc += ring[s][lane] * ring[s][31 - lane];
            if (i + 2 < ITERS)
                mbar_arrive(&empty[s]);
        }
        out[blockIdx.x * 32 + lane] = acc;
    }
}

__global__ void __launch_bounds__(32) bulk_syncthreads(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float buf[32];
    __shared__ __align__(8) uint64_t bar;
    const int t = threadIdx.x;
    if (t == 0) {
        mbar_init(&bar, 1);
        fence_init();
    }
    __syncthreads();
    if (t == 0) {
        mbar_expect(&bar, 128);
        bulk_load(buf, in, 128, &bar);
    }
    __syncthreads();
    out[t] = buf[(t + 1) % 32];
    if (t == 0)
        mbar_wait(&bar, 0);
}

__global__ void __launch_bounds__(32) bulk_issuer_early(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float buf[32];
    __shared__ __align__(8) uint64_t bar;
    const int t = threadIdx.x;
    if (t == 0) {
        mbar_init(&bar, 1);
        fence_init();
    }
    __syncthreads();
    float early = 0.0f;
    if (t == 0) {
        mbar_expect(&bar, 128);
        bulk_load(buf, in, 128, &bar);
        early = *(volatile float *)&buf[0];
    }
    mbar_wait(&bar, 0);
    out[t] = buf[(t + 1) % 32] + early;
}

__global__ void __launch_bounds__(32) bulk_store_ok(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t] * 2.0f;
    fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        bulk_store(out, tile, 128);
        bulk_wait_read();
    }
    __syncthreads();
    tile[t] = in[32 + t];
    __syncthreads();
    out[32 + t] = tile[(t + 1) % 32];
}

__global__ void __launch_bounds__(32) bulk_store_overwrite(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t] * 2.0f;
    fence_proxy_async();
    __syncthreads();
    if (t == 0)
        bulk_store(out, tile, 128);
    __syncthreads();
    tile[t] = in[32 + t];
    if (t == 0)
        bulk_wait_read();
    __syncthreads();
    out[32 + t] = tile[(t + 1) % 32];
}

__global__ void __launch_bounds__(32) bulk_store_no_fence(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ __align__(128) float tile[32];
    const int t = threadIdx.x;
    tile[t] = in[t] * 2.0f;
    __syncthreads();
    if (t == 0) {
        bulk_store(out, tile, 128);
        bulk_wait_read();
    }
    __syncthreads();
    tile[t] = in[32 + t];
    __syncthreads();
    out[32 + t] = tile[(t + 1) % 32];
}
