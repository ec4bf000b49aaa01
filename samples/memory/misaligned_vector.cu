// A shared staging buffer of bytes with a 4-byte record count in front of the records, read
// back as float4 vectors. Each thread stores one float4 record; thread 0 stores the count.
//
// misaligned_records: the records start right after the count, at buf + 4, and are stored
// through a float4 pointer: nvcc emits one 16-byte st.shared.v4.f32 per thread at
// buf + 4 + 16*t. The PTX ISA requires a 16-byte access to be 16-byte aligned (on a GPU:
// "misaligned address"); buf is declared 16-byte aligned, so every such address is 4 modulo
// 16 wherever the compiler places buf. Expected: violation (misaligned-address, at the store
// and at the load of the records).
// padded_records: the count gets a 16-byte slot of its own, so the records start at
// buf + 16. Expected: verified.
// Launch: 128 threads.
#include <cstdint>

constexpr int kThreads = 128;

__global__ void __launch_bounds__(kThreads)
misaligned_records(const float4 *__restrict__ in, float *__restrict__ out, int count) {
    __shared__ __align__(16) unsigned char buf[4 + 16 * kThreads];
    const int t = threadIdx.x;
    if (t == 0) *reinterpret_cast<int *>(buf) = count;
    reinterpret_cast<float4 *>(buf + 4)[t] = in[blockIdx.x * kThreads + t];  // BUG
    __syncthreads();
    const float4 r = reinterpret_cast<const float4 *>(buf + 4)[(t + 1) % kThreads];
    out[blockIdx.x * kThreads + t] = (r.x + r.y + r.z + r.w) * *reinterpret_cast<int *>(buf);
}

__global__ void __launch_bounds__(kThreads)
padded_records(const float4 *__restrict__ in, float *__restrict__ out, int count) {
    __shared__ __align__(16) unsigned char buf[16 + 16 * kThreads];
    const int t = threadIdx.x;
    if (t == 0) *reinterpret_cast<int *>(buf) = count;
    reinterpret_cast<float4 *>(buf + 16)[t] = in[blockIdx.x * kThreads + t];
    __syncthreads();
    const float4 r = reinterpret_cast<const float4 *>(buf + 16)[(t + 1) % kThreads];
    out[blockIdx.x * kThreads + t] = (r.x + r.y + r.z + r.w) * *reinterpret_cast<int *>(buf);
}
