// Classic 1-D stencil with a halo: 128 threads load 128 + 2*RADIUS elements into shared
// memory (threads 0..RADIUS-1 also load the left and right halos), __syncthreads(), then
// each thread sums its 2*RADIUS+1 neighbours.
// Launch: 128 threads.  Expected: verified.
#define BLOCK 128
#define RADIUS 3

__global__ void __launch_bounds__(BLOCK) stencil_1d(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float s[BLOCK + 2 * RADIUS];
    const int g = blockIdx.x * BLOCK + threadIdx.x + RADIUS;   // `in` is padded by RADIUS
    const int l = threadIdx.x + RADIUS;
    s[l] = in[g];
    if (threadIdx.x < RADIUS) {
        s[l - RADIUS] = in[g - RADIUS];
        s[l + BLOCK] = in[g + BLOCK];
    }
    __syncthreads();
    float sum = 0.0f;
    for (int o = -RADIUS; o <= RADIUS; ++o)
        sum += s[l + o];
    out[g - RADIUS] = sum;
}
