// Calls a __device__ function defined in another translation unit (compiled with
// -rdc=true, so the PTX declares it `.extern .func` without a body). weft cannot know what
// it does: it could synchronize or touch shared memory.
// Compile-flags: -rdc=true
// Expected: unverifiable, naming `external_helper`.
extern __device__ float external_helper(float x);

__global__ void __launch_bounds__(64) extern_call(const float *in, float *out) {
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = external_helper(s[63 - t]);
}
