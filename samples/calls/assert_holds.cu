// An assert that holds for every thread: the condition depends only on threadIdx and
// blockDim, which the emulator knows, so no thread reaches __assertfail.
// Expected: verified.
#include <cassert>

__global__ void __launch_bounds__(128) assert_holds(const float *in, float *out) {
    __shared__ float s[128];
    unsigned t = threadIdx.x;
    assert(t < blockDim.x);
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[(t + 1) % 128];
}
