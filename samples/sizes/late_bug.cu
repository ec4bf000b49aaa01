// A loop whose explored programs repeat exactly, and whose iteration 40 is different: it
// skips the barrier between the write of buf and the other threads' reads (a branch on the
// known loop counter, invisible in the commands of fewer trips). Every trip count above 40
// races. weft explores n up to --max-trips (verified, bounded: the values above those
// explored are listed as not explored) and never calls it verified for every n, though its
// explored programs repeat with period 1 (docs/induction.md §1). With --max-trips 48 the
// exploration reaches n = 41 and reports the race with that smallest failing value.
__global__ void __launch_bounds__(64) late_bug(const float *in, float *out, int n) {
    __shared__ float buf[64];
    int t = threadIdx.x;
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
        buf[t] = in[i * 64 + t];
        if (i != 40) __syncthreads();
        out[i * 64 + t] = buf[63 - t];
        __syncthreads();
    }
}
