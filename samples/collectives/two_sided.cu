// Do lanes at two *different* .sync collective instructions with the same member
// mask meet on the hardware?  Lanes 0-15 take one side of a lane-dependent branch, lanes
// 16-31 the other; both sides run the same kind of collective with the full mask.  A
// kernel that completes met; one killed at the time limit did not (scripts/hw/run.sh; each kernel is a manifest entry).
// Launch: 32 threads.  Compile: compute_90 (elect.sync needs sm_90).
#include <cstdint>

__global__ void __launch_bounds__(32) ballot_two_sides(const int *in, int *out) {
    unsigned t = threadIdx.x;
    int v = in[t];
    unsigned r;
    // Zero input: the low side votes true, the high side false.  One collective of all
    // 32 lanes gives every lane 0x0000ffff; two of 16 give the high lanes 0.
    if (t < 16) {
        r = __ballot_sync(0xffffffffu, v >= 0);
    } else {
        r = __ballot_sync(0xffffffffu, v > 0);
    }
    out[t] = r;
}

__global__ void __launch_bounds__(32) redux_two_sides(const int *in, int *out) {
    unsigned t = threadIdx.x;
    unsigned v = in[t] + t;
    unsigned r;
    if (t < 16) {
        r = __reduce_add_sync(0xffffffffu, v);
    } else {
        r = __reduce_or_sync(0xffffffffu, v) + __reduce_add_sync(0xffffffffu, v + 1);
    }
    out[t] = r;
}

__global__ void __launch_bounds__(32) match_two_sides(const int *in, int *out) {
    unsigned t = threadIdx.x;
    int v = in[t];
    unsigned r;
    if (t < 16) {
        r = __match_any_sync(0xffffffffu, v);
    } else {
        r = __match_any_sync(0xffffffffu, v + 1);
    }
    out[t] = r;
}

__global__ void __launch_bounds__(32) syncwarp_two_sides(const int *in, int *out) {
    __shared__ int s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t] + 1;
    if (t < 16) {
        __syncwarp();
    } else {
        __syncwarp();
    }
    out[t] = s[31 - t];
}

// One collective elects lane 0 for all 32 lanes (out: 1 for lane 0, 0 elsewhere); two
// elect lane 0 and lane 16 (out[16] = 16 * 2 + 1).
__global__ void __launch_bounds__(32) elect_two_sides(const int *in, int *out) {
    unsigned t = threadIdx.x;
    unsigned leader = 0, pred = 0;
    if (t < 16) {
        asm volatile("{\n\t.reg .pred P;\n\telect.sync %0|P, %2;\n\tselp.u32 %1, 1, 0, P;\n\t}"
                     : "=r"(leader), "=r"(pred) : "r"(0xffffffffu));
    } else {
        asm volatile("{\n\t.reg .pred P;\n\telect.sync %0|P, %2;\n\tselp.u32 %1, 1, 0, P;\n\t}"
                     : "=r"(leader), "=r"(pred) : "r"(0xffffffffu));
    }
    out[t] = leader * 2 + pred + in[t];
}

__global__ void __launch_bounds__(32) shfl_modes_two_sides(const int *in, int *out) {
    unsigned t = threadIdx.x;
    int v = in[t] + t;
    if (t < 16) {
        v = __shfl_sync(0xffffffffu, v, 0);
    } else {
        v = __shfl_xor_sync(0xffffffffu, v, 1);
    }
    out[t] = v;
}
