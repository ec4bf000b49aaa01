// FlashInfer's single-request decode attention kernel, instantiated the way FlashInfer's JIT
// instantiates it: this file is single_decode_customize_config.jinja and
// single_decode_kernel_inst.jinja (flashinfer-python 0.7.2.post1, csrc/) rendered by hand with
// the arguments flashinfer.jit.attention.modules.gen_single_decode_module passes: fp16 Q/K/V/O,
// head_dim_qk = head_dim_vo = 128, PosEncodingMode::kNone, no sliding window, no logits soft
// cap, variant DefaultAttention<false, false, false, false> from
// flashinfer/attention/variants.cuh, additional params maybe_alibi_slopes (float*) and
// logits_soft_cap, sm_scale, rope_rcp_scale, rope_rcp_theta (double).
//
// Instantiating SingleDecodeWithKVCacheDispatched emits SingleDecodeWithKVCacheKernel (in
// flashinfer/attention/decode.cuh) for every GQA group size its dispatch knows (1, 2, 3, 4, 6,
// 8, 16) and for 1 (sm < 80) and 2 (sm >= 80) shared-memory stages. Each is a cp.async
// pipeline: every thread loads its rows of K and V tiles into NUM_STAGES_SMEM shared stages
// (one commit group for K, one for V, per stage), waits with cp.async.wait_group
// 2*NUM_STAGES_SMEM-1 + __syncthreads before the block reads a stage, __syncthreads again
// before refilling it, and merges the partial softmax states of its bdz thread groups
// through shared memory at the end (sync_state). Only the host-side instantiation is written
// here; the kernel is FlashInfer's, compiled with `nvcc -ptx -arch=sm_80` against the headers
// in the wheel (corpus/build.sh).
#include <flashinfer/math.cuh>
#include <flashinfer/layout.cuh>
#include <flashinfer/pos_enc.cuh>
#include <flashinfer/attention/variant_helper.cuh>

using namespace flashinfer;

using DTypeQ = half;
using DTypeKV = half;
using DTypeO = half;
using IdType = int32_t;
constexpr int HEAD_DIM_QK = 128;
constexpr int HEAD_DIM_VO = 128;
constexpr auto USE_LOGITS_SOFT_CAP = false;
constexpr auto POS_ENCODING_MODE = PosEncodingMode::kNone;
constexpr auto USE_SLIDING_WINDOW = false;

struct Params {
  using DTypeQ = ::DTypeQ;
  using DTypeKV = ::DTypeKV;
  using DTypeO = ::DTypeO;
  using IdType = int32_t;
  DTypeQ* q;
  DTypeKV* k;
  DTypeKV* v;
  DTypeO* o;
  float* lse;
  float* maybe_alibi_slopes;
  double logits_soft_cap;
  double sm_scale;
  double rope_rcp_scale;
  double rope_rcp_theta;

  uint32_t kv_len;
  uint32_t num_qo_heads;
  uint32_t num_kv_heads;
  uint32_t q_stride_n;
  uint32_t q_stride_h;
  uint32_t kv_stride_n;
  uint32_t kv_stride_h;
  int32_t window_left;
  uint32_t kv_chunk_size;

  __host__ __device__ __forceinline__ uint32_t get_qo_len(uint32_t batch_idx) const { return 1; }

  __host__ __device__ __forceinline__ uint32_t get_kv_len(uint32_t batch_idx) const {
    return kv_len;
  }
};

#include <flashinfer/attention/variants.cuh>

#include <flashinfer/attention/decode.cuh>

using namespace flashinfer;

namespace flashinfer {

template cudaError_t SingleDecodeWithKVCacheDispatched<128, PosEncodingMode::kNone,
                                                       DefaultAttention<false, false, false, false>,
                                                       Params>(Params params, half* tmp,
                                                                cudaStream_t stream);

};  // namespace flashinfer
