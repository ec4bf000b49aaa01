// A row sum stored by every thread that holds it (the shape of a Triton `tl.sum(x, axis=1)`
// before its layout conversion): each of the two warps reduces its half of the row with
// butterfly shuffles, lane 0 of each puts its partial sum in shared memory, and after the
// barrier every thread of both warps adds the two partials and stores the sum to one shared
// word, with no barrier between the warps' stores.  The values come from global memory, so
// weft does not know them; it names each partial by the store that wrote it and the sum by
// the instruction and its operands, so the two warps' stores are of one value: a benign race
// (exit 0, a warning; a violation with --strict).
// Launch: 64 threads (2 warps).  Expected: replicated_row_sum verified with benign-race
// warnings; replicated_row_difference (below) a race.
__global__ void __launch_bounds__(64) replicated_row_sum(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float partial[2];
    __shared__ float total;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float v = in[threadIdx.x];
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffff, v, o);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    total = partial[0] + partial[1];
    __syncthreads();
    out[threadIdx.x] = total;
}

// The same with each warp subtracting the other warp's partial from its own: the warps store
// different values, and which lands last decides the result: a race.
__global__ void __launch_bounds__(64) replicated_row_difference(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float partial[2];
    __shared__ float total;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float v = in[threadIdx.x];
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffff, v, o);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    total = partial[warp] - partial[1 - warp];
    __syncthreads();
    out[threadIdx.x] = total;
}
