// An early exit on two fields, then a loop over the smaller of two others whose third trip
// forgets the barrier between a thread's write and its neighbour's read: a race for every
// launch with m, n >= 1 and min(k, gk) >= 3. The exploration must reach those inputs: its
// witness search took the four fields together, proposed values with the last field
// varying fastest, and gave up after 20,000 proposals before m left 0, so the path past
// the exit was abandoned and the kernel read as verified (with nothing listed as not
// explored). The fields fall into two independent groups, (m, n) and (k, gk), searched
// apart; and `min(k, gk)` crosses a bound where both fields do.
// Launch: 64 threads.  Expected: violation (race), found with m = n = 1, k = gk = 3.
__global__ void __launch_bounds__(64)
two_groups_bug(int m, int n, int k, int gk, float *out) {
    __shared__ float s[64];
    if (m <= 0 || n <= 0)
        return;
    int iters = min(k, gk);
    float acc = 0.0f;
    for (int i = 0; i < iters; ++i) {
        s[threadIdx.x] = (float)i;
        if (i != 2)
            __syncthreads();
        acc += s[(threadIdx.x + 1) % 64];
        __syncthreads();
    }
    out[threadIdx.x] = acc;
}
