// A loop around __syncthreads() whose trip count is computed from a float kernel parameter
// (`scale`, PTX parameter index 1) by __expf, which nvcc lowers to `ex2.approx`: the PTX ISA
// bounds its error but does not fix its bits, so weft does not compute it, the trip count
// carries no symbolic term to explore, and the kernel cannot be verified; the report names
// the parameter (fixing it with --param does not help either: the result stays unknown).
// Launch: 128 threads.  Expected: unverifiable.
__global__ void __launch_bounds__(128) float_exp_loop(const float *__restrict__ in, float scale, float *__restrict__ out) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    float acc = in[blockIdx.x * 128 + t];
    const int iters = (int)__expf(scale);
    for (int i = 0; i < iters; ++i) {
        s[t] = acc;
        __syncthreads();
        acc = 0.5f * (acc + s[(t + 1) % 128]);
        __syncthreads();
    }
    out[blockIdx.x * 128 + t] = acc;
}
