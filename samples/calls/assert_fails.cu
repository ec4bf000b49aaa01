// An assert that fails for one thread whatever the input: thread 37 (warp 1 lane 5)
// calls __assertfail, which traps.
// Expected: trap-reachable, naming the assertion and warp 1 lane 5.
#include <cassert>

__global__ void __launch_bounds__(64) assert_fails(const float *in, float *out) {
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    assert(t != 37 && "thread 37 must not get here");
    out[t] = s[63 - t];
}
