// A loop around __syncthreads() whose trip count is a kernel parameter (`iters`, PTX
// parameter index 1).  Whether and how often the barrier runs depends on an input, so
// without a value for it the kernel cannot be verified; with `--param 1=4` (or the PTX
// parameter name) the loop is emulated and every iteration's shared accesses are ordered
// by its two barriers.
// Launch: 128 threads.  Expected: unverifiable; with --param iters=4: verified.
__global__ void __launch_bounds__(128) param_loop(const float *__restrict__ in, int iters, float *__restrict__ out) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    float acc = in[blockIdx.x * 128 + t];
    for (int i = 0; i < iters; ++i) {
        s[t] = acc;
        __syncthreads();
        acc = 0.5f * (acc + s[(t + 1) % 128]);
        __syncthreads();
    }
    out[blockIdx.x * 128 + t] = acc;
}
