// CUTLASS's persistent FMHA tile loop (example 77's MLA forward): a loop over the grid's
// tiles, the tile index divided by CUTLASS's FastDivmod (`divisor == 1 ? x : umulhi(x, m) >> s`),
// `if (m_block * 256 >= q || k == 0) continue;`, and in the body an obvious race (each thread
// reads its mirror's word before the barrier). A race for num_blocks >= 1, q >= 1, k != 0.
//
// weft said "verified" (bounded: num_blocks = 0 only). At block 0 the divmod's selp is of two
// zeros, but its term kept the divisor, multiplier and shift fields; with them the tile test
// was a constant 1 once q and k were fixed, which the exploration took for a variable with no
// inputs and abandoned; the confirming run of the racy path was abandoned there too, and the
// report fell back to the last verified path. Terms now fold such operations, a term that
// folds to a constant is a known value, and an unconfirmable path is "could not verify".
//
// Launch 64 threads. Compile: compute_90.
#include <cstdint>
struct Params {
    int q, k, d0, d1, h0, h1, b;
    int num_blocks;
    int divisor;
    uint32_t multiplier, shift_right;
};
struct FastDivmod {
    int divisor; uint32_t multiplier, shift_right;
    __device__ int div(int x) const {
        if (divisor == 1) return x;
        return int(__umulhi(uint32_t(x), multiplier) >> shift_right);
    }
};
__global__ void __launch_bounds__(64) red(const __grid_constant__ Params p, float *out) {
    __shared__ float s[64];
    FastDivmod dm{p.divisor, p.multiplier, p.shift_right};
    for (int blk = blockIdx.x; blk < p.num_blocks; blk += gridDim.x) {
        int q_blk = dm.div(blk);
        if (q_blk * 256 >= p.q || p.k == 0) continue;
        s[threadIdx.x] = float(blk);
        float v = s[63 - threadIdx.x];                 // race: read before the barrier
        __syncthreads();
        out[blk * 64 + threadIdx.x] = v;
        __syncthreads();
    }
}
