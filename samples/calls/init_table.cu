// The shared-memory index comes from an initialized __device__ table: with the
// initializer's bytes known the index is known, and the permutation it encodes writes
// every slot exactly once.
// Expected: verified with a note (assumes the host does not overwrite `perm` before the
// launch); with --no-initializers: unverifiable (the shared address depends on a
// global-memory load).
__device__ int perm[8] = {3, 6, 1, 4, 7, 2, 5, 0};

__global__ void __launch_bounds__(64) init_table(const float *in, float *out) {
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    unsigned slot = (t & ~7u) + perm[t & 7];
    s[slot] = in[t];
    __syncthreads();
    out[t] = s[t];
}
