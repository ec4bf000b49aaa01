// A loop whose synchronization differs on every iteration: iteration i runs i + 1 barriers,
// so after n trips barrier 0 has completed n(n+1)/2 generations and no two iterations
// synchronize alike (no period for an induction over trip counts to find). weft explores
// the trip count n up to --max-trips and gives a bounded verdict that lists the values of n
// it did not explore, never a verdict for every n.
__global__ void __launch_bounds__(128) no_period(float *out, int n) {
    __shared__ float acc[128];
    int t = threadIdx.x;
    acc[t] = 0.0f;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j <= i; ++j) {
            __syncthreads();
            acc[(t + j) % 128] += 1.0f;
        }
        __syncthreads();
    }
    __syncthreads();
    out[t] = acc[t];
}
