// An assert on input data, before barriers: whether it fails depends on `in`, but the
// failing side only terminates (the trap aborts the kernel), so the branch decides no
// synchronization. weft verifies the executions in which the assertion holds and says so.
// Expected: verified, with a note naming the assumed assertion.
#include <cassert>

__global__ void __launch_bounds__(128) assert_input(const int *in, int *out) {
    __shared__ int s[128];
    unsigned t = threadIdx.x;
    int v = in[blockIdx.x * 128 + t];
    assert(v >= 0);
    s[t] = v;
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[127 - t];
    __syncthreads();
    s[t] = 2 * v;
}
