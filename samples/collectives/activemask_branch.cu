// __shfl_sync(__activemask(), ...) inside a lane-dependent branch: lanes 0-19 and 20-31 of
// each warp take different sides, and each side shuffles among the lanes that execute it
// (activemask waits for no one). Then an ordinary __syncthreads exchange.
// Expected: verified.
__global__ void __launch_bounds__(64) activemask_branch(const int *in, int *out) {
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    int v = in[blockIdx.x * 64 + t];
    if ((t & 31) < 20) {
        v += __shfl_sync(__activemask(), v, 0);
    } else {
        v += __shfl_sync(__activemask(), v, 20);
    }
    s[t] = v;
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[63 - t];
}
