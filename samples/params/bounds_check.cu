// Input-dependent control that guards only global memory: `n` (a parameter) decides which
// threads load and store global memory, but the barrier and every shared address depend
// only on threadIdx.  Verifiable for all n without --param.
// Launch: 128 threads.  Expected: verified.
__global__ void __launch_bounds__(128) bounds_check(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    const int i = blockIdx.x * 128 + t;
    float v = 0.0f;
    if (i < n)
        v = in[i];
    s[t] = v;
    __syncthreads();
    if (i < n)
        out[i] = s[127 - t];
}
