// A consistency check that always fires: thread 64 traps.  `__trap()` is reachable for
// every input (the condition depends only on threadIdx), so the kernel aborts.
// Launch: 128 threads.  Expected: violation (trap-reachable).
__global__ void __launch_bounds__(128) trap_reachable(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    if (t == 64) __trap();                 // BUG: reachable
    out[blockIdx.x * 128 + t] = s[127 - t];
}
