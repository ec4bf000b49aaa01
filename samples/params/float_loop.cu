// A loop around __syncthreads() whose trip count is computed from a float kernel parameter
// (`scale`, PTX parameter index 1): `(int)(scale * 2.0f)`, which nvcc emits as
// `add.f32 scale, scale` and `cvt.rzi.s32.f32`. weft computes both exactly (IEEE 754, rounded
// to nearest even), so the trip count is a term over the parameter's bit pattern and its
// values are explored like an integer trip count: verified, bounded by --max-trips.
// Launch: 128 threads.  Expected: verified.
__global__ void __launch_bounds__(128) float_loop(const float *__restrict__ in, float scale, float *__restrict__ out) {
    __shared__ float s[128];
    const int t = threadIdx.x;
    float acc = in[blockIdx.x * 128 + t];
    const int iters = (int)(scale * 2.0f);
    for (int i = 0; i < iters; ++i) {
        s[t] = acc;
        __syncthreads();
        acc = 0.5f * (acc + s[(t + 1) % 128]);
        __syncthreads();
    }
    out[blockIdx.x * 128 + t] = acc;
}
