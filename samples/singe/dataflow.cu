// Singe-style warp-specialized dataflow: six warps, each running straight-line code,
// exchange warp-wide values through shared-memory slots.  Every cross-warp edge is a
// producer `bar.arrive b, 64` after writing a slot and a consumer `bar.sync b, 64` before
// reading it.  Barriers 1 and 5 and slots 0 and 3 are each used twice; every second use is
// ordered after the first one through a chain of other barriers, e.g. barrier 1:
//   gen 1: W0 -> W1;  W1 -1-> W2 (b4), W2 -> W3 (b2);  gen 2: W2 -> W3
// so both participants of generation 2 happen after generation 1 completed (cf. the
// Heptane example, Figure 2 of the WEFT paper).
// Launch: 192 threads (6 warps).  Expected: verified.
#define WARPS 6
#define SLOTS 6

template <int ID, int COUNT> __device__ __forceinline__ void bar_sync() {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}
template <int ID, int COUNT> __device__ __forceinline__ void bar_arrive() {
    asm volatile("bar.arrive %0, %1;" ::"n"(ID), "n"(COUNT) : "memory");
}

__shared__ float xfer[SLOTS][32];

// producer side of a dataflow edge
template <int BAR> __device__ __forceinline__ void send(int slot, int lane, float v) {
    xfer[slot][lane] = v;
    bar_arrive<BAR, 64>();
}
// consumer side of a dataflow edge
template <int BAR> __device__ __forceinline__ float recv(int slot, int lane) {
    bar_sync<BAR, 64>();
    return xfer[slot][lane];
}

__global__ void __launch_bounds__(WARPS * 32) dataflow(const float *__restrict__ in, float *__restrict__ out) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float v = in[blockIdx.x * WARPS * 32 + threadIdx.x];
    switch (warp) {
    case 0:
        send<1>(0, lane, v * 2.0f);          // A  -> W1          (b1 gen 1)
        v += recv<6>(5, lane);               // F  <- W5
        send<5>(0, lane, v * 3.0f);          // G  -> W4          (b5 gen 2, slot 0 reused)
        break;
    case 1:
        v += recv<1>(0, lane);               // A  <- W0          (b1 gen 1)
        send<4>(3, lane, v + 1.0f);          // B  -> W2
        break;
    case 2:
        v += recv<4>(3, lane);               // B  <- W1
        send<2>(1, lane, v - 1.0f);          // C  -> W3
        send<1>(3, lane, v * v);             // D  -> W3          (b1 gen 2, slot 3 reused)
        break;
    case 3:
        v += recv<2>(1, lane);               // C  <- W2
        v *= recv<1>(3, lane);               // D  <- W2          (b1 gen 2)
        send<5>(4, lane, v);                 // E  -> W4          (b5 gen 1)
        break;
    case 4:
        v += recv<5>(4, lane);               // E  <- W3          (b5 gen 1)
        send<3>(2, lane, v * 0.5f);          // H  -> W5
        v -= recv<5>(0, lane);               // G  <- W0          (b5 gen 2)
        break;
    default:
        v += recv<3>(2, lane);               // H  <- W4
        send<6>(5, lane, v);                 // F  -> W0
        break;
    }
    out[blockIdx.x * WARPS * 32 + threadIdx.x] = v;
}
