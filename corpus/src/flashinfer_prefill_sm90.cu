// FlashInfer's Hopper (FA3-style) single-request prefill attention kernel, instantiated the way
// FlashInfer's JIT instantiates it: this file is single_prefill_sm90_customize_config.jinja and
// single_prefill_sm90_kernel_inst.jinja (flashinfer-python 0.7.2.post1, csrc/) rendered by hand
// with the arguments flashinfer.jit.attention.modules.gen_single_prefill_module passes for the
// "fa3" backend without FP8: fp16 Q/K/V/O, int32 indices, head_dim_qk = head_dim_vo = 128,
// no sliding window, no logits soft cap, variant DefaultAttention<false> from
// flashinfer/attention/hopper/variants.cuh, additional params maybe_scale_v (float*) and
// logits_soft_cap, sm_scale, scale_v_scalar (double), mask mode kNone.
//
// The kernel (PrefillWithKVCacheKernel in flashinfer/attention/hopper/prefill_sm90.cuh) is
// warp-specialized: a producer warpgroup loads Q, K and V by TMA into a 2-stage mbarrier
// pipeline (CUTLASS PipelineTmaAsync), two consumer warpgroups run wgmma and the online softmax
// (CTA tile 128 queries x 192 keys, 384 threads), with named barriers between them. Only the
// host-side template instantiation is written here; the kernel is FlashInfer's, compiled with
// `nvcc -ptx -arch=sm_90a` against the headers and the CUTLASS tree in the wheel
// (corpus/build.sh).
#include <flashinfer/attention/hopper/attention_updater.cuh>
#include <flashinfer/attention/hopper/variant_helper.cuh>
#include <flashinfer/cutlass_utils.cuh>
#include <flashinfer/layout.cuh>
#include <flashinfer/math.cuh>
#include <flashinfer/pos_enc.cuh>
#include <flashinfer/utils.cuh>

using namespace flashinfer;

using DTypeQ = cutlass_dtype_t<half>;
using DTypeKV = cutlass_dtype_t<half>;
using DTypeO = cutlass_dtype_t<half>;
using IdType = cutlass_dtype_t<int32_t>;

constexpr int HEAD_DIM_QK = 128;
constexpr int HEAD_DIM_VO = 128;
constexpr auto USE_LOGITS_SOFT_CAP = false;
constexpr auto USE_SLIDING_WINDOW = false;

// The variant's additional parameters (the template's `additional_params`).
struct PrefillAdditionalParams {
  float* maybe_scale_v;
  double logits_soft_cap;
  double sm_scale;
  double scale_v_scalar;
};

#include "flashinfer_single_prefill_params.h"

#include <flashinfer/attention/hopper/variants.cuh>

#include <flashinfer/attention/hopper/prefill_sm90.cuh>

namespace flashinfer {

template cudaError_t SinglePrefillWithKVCacheDispatched<HEAD_DIM_QK, HEAD_DIM_VO, MaskMode::kNone,
                                                        /*USE_SLIDING_WINDOW=*/false,
                                                        DefaultAttention<false>, Params>(
    Params& params, cudaStream_t stream);

};  // namespace flashinfer
