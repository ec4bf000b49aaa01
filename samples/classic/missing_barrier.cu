// Missing barrier: every thread writes its own element of a shared array and then reads
// its right neighbour's element with no __syncthreads() in between.  Thread t+1's write
// and thread t's read of s[t+1] are unordered (also across warps: thread 31 reads the
// element of thread 32, thread 127 that of thread 0), so this races even when the lanes
// of a warp are assumed to run in lock-step.
// Launch: 128 threads.  Expected: violation (race), with and without --warp-sync.
__global__ void __launch_bounds__(128) missing_barrier(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    // BUG: __syncthreads() missing here
    out[blockIdx.x * 128 + t] = s[(t + 1) % 128] - s[t];
}
