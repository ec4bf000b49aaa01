// FlashInfer's Hopper FP8 single-request prefill attention kernel, instantiated the way
// FlashInfer's JIT instantiates its "fa3" backend for FP8 inputs: like
// flashinfer_prefill_sm90.cu (single_prefill_sm90 templates, flashinfer-python 0.7.2.post1),
// rendered by hand for fp8 e4m3 Q/K/V, fp16 O, int32 indices, head_dim = 128, no sliding
// window, mask mode kNone, variant DefaultFP8Attention (StandardFP8Attention in
// flashinfer/attention/hopper/variants.cuh), additional params sm_scale and per-head scale
// tensors with scalar fallbacks for q, k and v.
//
// The kernel (FP8PrefillWithKVCacheKernel in
// flashinfer/attention/hopper/quantization/prefill_sm90.cuh) is warp-specialized: a producer
// warpgroup loads Q, K and V by TMA into 2-stage mbarrier pipelines (pipeline_k, pipeline_v)
// and then transposes each V tile in shared memory itself (ldmatrix/stmatrix, named
// barriers among its 128 threads) into a third pipeline (pipeline_vt, a CUTLASS PipelineAsync)
// that the two wgmma consumer warpgroups read (CTA tile 128 queries x 192 keys, 384 threads).
// Only the host-side template instantiation is written here; the kernel is FlashInfer's,
// compiled with `nvcc -ptx -arch=sm_90a` against the headers and the CUTLASS tree in the
// wheel (corpus/build.sh).
#include <cuda_fp8.h>

#include <flashinfer/attention/hopper/attention_updater.cuh>
#include <flashinfer/attention/hopper/variant_helper.cuh>
#include <flashinfer/cutlass_utils.cuh>
#include <flashinfer/layout.cuh>
#include <flashinfer/math.cuh>
#include <flashinfer/pos_enc.cuh>
#include <flashinfer/utils.cuh>

using namespace flashinfer;

using DTypeQ = cutlass_dtype_t<__nv_fp8_e4m3>;
using DTypeKV = cutlass_dtype_t<__nv_fp8_e4m3>;
using DTypeO = cutlass_dtype_t<half>;
using IdType = cutlass_dtype_t<int32_t>;

constexpr int HEAD_DIM = 128;

// The variant's additional parameters (the template's `additional_params`).
struct PrefillAdditionalParams {
  float* maybe_scale_q;
  float* maybe_scale_k;
  float* maybe_scale_v;
  double scale_q_scalar;
  double scale_k_scalar;
  double scale_v_scalar;
  double sm_scale;
};

#include "flashinfer_single_prefill_params.h"

#include <flashinfer/attention/hopper/variants.cuh>

#include <flashinfer/attention/hopper/quantization/prefill_sm90.cuh>

namespace flashinfer {

template cudaError_t SingleFP8PrefillWithKVCacheDispatched<HEAD_DIM, MaskMode::kNone,
                                                           /*LEFT_SLIDING_WINDOW=*/false,
                                                           DefaultFP8Attention, Params>(
    Params& params, cudaStream_t stream);

};  // namespace flashinfer
