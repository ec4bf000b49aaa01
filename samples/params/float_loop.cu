// A loop around __syncthreads() whose trip count is computed from a float kernel parameter
// (`scale`, PTX parameter index 1).  weft does not evaluate floating-point arithmetic, so
// the trip count carries no symbolic term to explore (and a --param for scale does not make
// it known either): the kernel cannot be verified, and the report names the parameter.
// Launch: 128 threads.  Expected: unverifiable.
__global__ void __launch_bounds__(128) float_loop(const float *__restrict__ in, float scale, float *__restrict__ out) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    float acc = in[blockIdx.x * 128 + t];
    const int iters = (int)(scale * 2.0f);
    for (int i = 0; i < iters; ++i) {
        s[t] = acc;
        __syncthreads();
        acc = 0.5f * (acc + s[(t + 1) % 128]);
        __syncthreads();
    }
    out[blockIdx.x * 128 + t] = acc;
}
