// A lost signal: warps 0 and 1 each `bar.arrive 1, 64`, but no thread ever waits on
// barrier 1.  The two arrivals complete generation 1 with no waiter in every execution, so
// the signal synchronizes nothing (the producer meant the consumer to `bar.sync 1, 64`).
// The `__syncthreads()` after it keeps the rest of the kernel well-synchronized.
// Launch: 64 threads.  Expected: violation (no-waiter).
__device__ __forceinline__ void bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__global__ void __launch_bounds__(64) no_waiter(float *__restrict__ out) {
    bar_arrive(1, 64);   // BUG: nobody waits on barrier 1
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = 1.0f;
}
