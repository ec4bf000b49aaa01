// The same branch with a full member mask: each side's __shfl_sync waits for all 32 lanes,
// but lanes 20-31 never execute the first one and lanes 0-19 never the second. On Volta and
// later both wait forever.
// Expected: violation (deadlock), naming the mask and the missing lanes.
__global__ void __launch_bounds__(64) full_mask_branch(const int *in, int *out) {
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    int v = in[blockIdx.x * 64 + t];
    if ((t & 31) < 20) {
        v += __shfl_sync(0xffffffffu, v, 0);
    } else {
        v += __shfl_sync(0xffffffffu, v, 20);
    }
    s[t] = v;
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[63 - t];
}
