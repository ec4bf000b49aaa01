// Full-mask shuffles in a lane-dependent branch.
//
// Kernels (each a manifest entry):
//   full_mask_branch  lanes 0-19 and 20-31 take different sides and each side runs
//                     __shfl_sync(0xffffffff, ...): two shfl.sync instructions with the same
//                     qualifiers and the same member mask.  From sm_70 on each waits "until
//                     all non-exited threads corresponding to membermask have executed
//                     shfl.sync with the same qualifiers and same membermask value" (PTX ISA),
//                     so the two sides meet and the warp goes on: verified.  (An H200 runs it
//                     to completion: scripts/hw.  Before sm_70 all lanes had to execute the
//                     same instruction, and weft reports a deadlock for such a target.)
//   one_sided_shfl    only lanes 0-19 shuffle with the full mask; lanes 20-31 go straight to
//                     __syncthreads, which waits for lanes 0-19: each side waits for the
//                     other forever.  Expected: violation (deadlock), naming the mask and the
//                     missing lanes.
__global__ void __launch_bounds__(64) full_mask_branch(const int *in, int *out) {
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    int v = in[blockIdx.x * 64 + t];
    if ((t & 31) < 20) {
        v += __shfl_sync(0xffffffffu, v, 0);
    } else {
        v += __shfl_sync(0xffffffffu, v, 20);
    }
    s[t] = v;
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[63 - t];
}

__global__ void __launch_bounds__(64) one_sided_shfl(const int *in, int *out) {
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    int v = in[blockIdx.x * 64 + t];
    if ((t & 31) < 20) {
        v += __shfl_sync(0xffffffffu, v, 0);
    }
    s[t] = v;
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[63 - t];
}
