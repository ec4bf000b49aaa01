// Classic 2-D tiled transpose (the CUDA SDK "coalesced transpose"): a 32x8 block moves a
// 32x32 tile through shared memory (padded to 33 columns against bank conflicts), each
// thread handling 4 rows; one __syncthreads() separates the writes from the reads.
// Launch: 32x8 threads.  Expected: verified.
#define TILE 32
#define ROWS 8

__global__ void __launch_bounds__(TILE * ROWS)
transpose(const float *__restrict__ in, float *__restrict__ out, int width, int height) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
