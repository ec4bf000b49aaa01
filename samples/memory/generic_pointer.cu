// A shared-memory histogram updated through a pointer passed to a helper that is not
// inlined and is also called with a global pointer: nvcc cannot give the helper one state
// space and emits generic loads and stores (ld.u32/st.u32, not ld.shared), whose address
// depends on each thread's input bin.
//
// racy_histogram: the helper increments counts[bin] with a plain read-modify-write, so two
// threads with the same bin race. The address comes from global memory (the input), so weft
// cannot know it: unverifiable, naming the generic pointer into shared memory. (Verified
// before weft marked generic addresses computed from the shared window: an unknown generic
// address was taken as global memory.)
// Launch: 64 threads.
__device__ __noinline__ void bump(unsigned *counts, int bin) { counts[bin] += 1u; }

__global__ void __launch_bounds__(64) racy_histogram(const int *__restrict__ in, unsigned *__restrict__ out) {
    __shared__ unsigned counts[64];
    const int t = threadIdx.x;
    counts[t] = 0u;
    __syncthreads();
    bump(counts, in[blockIdx.x * 64 + t] & 63);  // BUG: not atomic
    __syncthreads();
    out[blockIdx.x * 64 + t] = counts[t];
    bump(out + blockIdx.x * 64, t);  // the same helper on global memory
}
