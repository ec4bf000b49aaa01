// Benign race: lane 0 of each of the two warps stores the same constant to one shared flag
// with no barrier between the stores (as Triton's warp-specialized kernels store identical
// constants from several warps).  Whichever store lands last, the flag holds 1, so this is a
// benign race: a warning, exit 0; with --strict it is a violation.  Every read of the flag
// happens after the __syncthreads().
// Launch: 64 threads (2 warps).  Expected: same_value_writes verified with a benign-race
// warning (violation with --strict); different_value_writes (below) a race.
__global__ void __launch_bounds__(64) same_value_writes(const float *__restrict__ in, float *__restrict__ out) {
    volatile __shared__ int flag;
    __shared__ float buf[64];
    if (threadIdx.x % 32 == 0)
        flag = 1;
    buf[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = buf[63 - threadIdx.x] * flag;
}

// The same with each warp storing its own index: the stores differ, so the final value
// depends on the order: a race (violation).
__global__ void __launch_bounds__(64) different_value_writes(const float *__restrict__ in, float *__restrict__ out) {
    volatile __shared__ int flag;
    __shared__ float buf[64];
    if (threadIdx.x % 32 == 0)
        flag = threadIdx.x / 32;
    buf[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = buf[63 - threadIdx.x] * flag;
}
