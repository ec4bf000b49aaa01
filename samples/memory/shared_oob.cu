// Off-by-one shared-memory write: thread t writes s[t + 1], so the last thread of the
// 128-thread CTA writes s[128], one element past the end of the 128-float array.  The
// barrier orders the writes before the reads, so nothing races; the only violation is
// the out-of-bounds store.
// Launch: 128 threads.  Expected: violation (shared-out-of-bounds).
__global__ void __launch_bounds__(128) shared_oob(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    s[t + 1] = in[blockIdx.x * 128 + t];   // BUG: t + 1 == 128 for the last thread
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[t];
}
