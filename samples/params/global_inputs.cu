// Global inputs (docs/semantics.md §6.5): values a kernel loads from global memory decide its
// synchronization.  weft gives every (address, size) such weak loads read one symbolic value,
// an input of the launch that nothing writes while the kernel runs, and explores the
// branches on it like branches on a kernel parameter.
//
// skip_ignored_row (the shape of Liger's cross-entropy kernel): every thread loads the row's
// label from one address and the whole CTA skips the row, barriers included, when it is the
// ignored label.  All threads read the same value, so they all take the same side: verified.
//
// per_thread_rounds: each thread loads its own round count from flags[threadIdx.x] and runs
// that many rounds of a loop with __syncthreads().  Threads with different counts reach
// different numbers of barriers: a deadlock, found with two different counts.
//
// Launch: 128 threads.  Expected: skip_ignored_row verified (bounded), per_thread_rounds a
// deadlock.
__global__ void __launch_bounds__(128) skip_ignored_row(const long long *labels, const float *in,
                                                        float *out, long long ignore_index) {
    __shared__ float partial[128];
    const long long y = labels[blockIdx.x];
    if (y == ignore_index) {
        out[blockIdx.x * 128 + threadIdx.x] = 0.0f;
        return;
    }
    partial[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
    __syncthreads();
    for (int s = 64; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

__global__ void __launch_bounds__(128) per_thread_rounds(const int *rounds, float *out) {
    __shared__ float acc[128];
    acc[threadIdx.x] = 0.0f;
    __syncthreads();
    const int n = rounds[threadIdx.x];
    for (int i = 0; i < n; i++) {
        acc[threadIdx.x] += acc[(threadIdx.x + 1) % 128];
        __syncthreads();
    }
    out[threadIdx.x] = acc[threadIdx.x];
}
