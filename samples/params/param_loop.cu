// A loop around __syncthreads() whose trip count is a kernel parameter (`iters`, PTX
// parameter index 1).  Without a value for it weft explores the trip count (every value up
// to the --max-trips bound, a bounded verdict that lists the others); with `--param 1=4`
// (or the PTX parameter name) only that trip count is emulated.  Every iteration's shared
// accesses are ordered by its two barriers.
// Launch: 128 threads.  Expected: verified (bounded); with --param iters=4: verified.
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
