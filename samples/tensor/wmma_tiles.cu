// Four warps each multiply one 16x16 tile of A by B with the warp matrix functions
// (nvcuda::wmma, PTX wmma.load / wmma.mma / wmma.store), staging the tiles in shared memory
// with rows padded to 24 halves (48 bytes: the usual padding against bank conflicts, a
// stride that is a multiple of 16 bytes as load_matrix_sync requires).
//
// wmma_tiles: every thread stages its part of A and B, __syncthreads, each warp loads its
// fragments and stores its accumulator tile into its own shared C slot, __syncwarp, then
// each lane copies two rows of its warp's own slot to global memory. Expected: verified.
// wmma_neighbour_tile: each warp copies out its *neighbour's* C slot after only a
// __syncwarp: the neighbour warp's wmma.store races with the copy. Expected: violation
// (race: the wmma.store against the loads of the copy).
// wmma_unstaged: the __syncthreads between staging A and B and the wmma.load is missing: a
// warp's wmma.load of the A tile reads rows other warps store. Expected: violation (race).
// Before weft modelled wmma.load and wmma.store as shared accesses, all three verified.
// Launch: 128 threads.
#include <mma.h>
#include <cuda_fp16.h>

using namespace nvcuda;

constexpr int kWarps = 4;
constexpr int kLd = 24;  // halves per padded row
constexpr int kLdC = 20; // floats per padded row of C (80 bytes)

struct Smem {
    __half a[16 * kLd];
    __half b[kWarps][16 * kLd];
    float c[kWarps][16 * kLdC];
};

__device__ void stage(Smem &s, const __half *a, const __half *b) {
    const int t = threadIdx.x;
    // A: 256 halves over 128 threads; each B tile: 256 halves per warp slot.
    for (int i = t; i < 256; i += 128) s.a[(i / 16) * kLd + i % 16] = a[i];
    for (int i = t; i < kWarps * 256; i += 128) {
        const int w = i / 256, e = i % 256;
        s.b[w][(e / 16) * kLd + e % 16] = b[i];
    }
}

__device__ void multiply(Smem &s, int w) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, s.a, kLd);
    wmma::load_matrix_sync(fb, s.b[w], kLd);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(s.c[w], fc, kLdC, wmma::mem_row_major);
}

__device__ void copy_out(const Smem &s, int slot, float *out) {
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    // Lane l copies half a row: row l / 2, columns 8 * (l % 2) .. + 8.
    const int row = lane / 2, col = 8 * (lane % 2);
    for (int j = 0; j < 8; ++j) out[w * 256 + row * 16 + col + j] = s.c[slot][row * kLdC + col + j];
}

__global__ void __launch_bounds__(128)
wmma_tiles(const __half *a, const __half *b, float *out) {
    __shared__ __align__(128) Smem s;
    const int w = threadIdx.x / 32;
    stage(s, a, b);
    __syncthreads();
    multiply(s, w);
    __syncwarp();
    copy_out(s, w, out);
}

__global__ void __launch_bounds__(128)
wmma_neighbour_tile(const __half *a, const __half *b, float *out) {
    __shared__ __align__(128) Smem s;
    const int w = threadIdx.x / 32;
    stage(s, a, b);
    __syncthreads();
    multiply(s, w);
    __syncwarp();                          // BUG: orders only this warp's lanes
    copy_out(s, (w + 1) % kWarps, out);
}

__global__ void __launch_bounds__(128)
wmma_unstaged(const __half *a, const __half *b, float *out) {
    __shared__ __align__(128) Smem s;
    const int w = threadIdx.x / 32;
    stage(s, a, b);
    // BUG: no __syncthreads(): the A tile is staged by all four warps
    multiply(s, w);
    __syncwarp();
    copy_out(s, w, out);
}
