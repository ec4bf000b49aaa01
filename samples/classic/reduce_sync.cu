// Classic shared-memory tree reduction with a __syncthreads() after every step
// (the loop bound comes from blockDim.x, which is known for the emulated CTA).
// Launch: 256 threads.  Expected: verified.
__global__ void __launch_bounds__(256) reduce_sync(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float sdata[256];
    const unsigned t = threadIdx.x;
    sdata[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = sdata[0];
}
