// Reduction with the old "warp-synchronous" tail (pre-Volta idiom): __syncthreads() down
// to 64 elements, then warp 0 finishes without any barrier, __syncwarp() or volatile,
// relying on its 32 lanes running in lock-step.  Lane t reads sdata[t + 16] while lane
// t + 16 writes it (and so on for 8, 4, 2, 1): a race unless lanes of a warp are assumed
// to execute in lock-step (weft --warp-sync), in which case the warp's accesses are
// totally ordered and everything else is ordered by the __syncthreads() calls.
// Launch: 256 threads.  Expected: violation (race); with --warp-sync: verified.
__global__ void __launch_bounds__(256) reduce_warp_tail(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float sdata[256];
    const unsigned t = threadIdx.x;
    sdata[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (t < s)
            sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t < 32) {
        sdata[t] += sdata[t + 32];
        sdata[t] += sdata[t + 16];
        sdata[t] += sdata[t + 8];
        sdata[t] += sdata[t + 4];
        sdata[t] += sdata[t + 2];
        sdata[t] += sdata[t + 1];
    }
    if (t == 0)
        out[blockIdx.x] = sdata[0];
}
