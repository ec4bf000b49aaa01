// The Params struct of FlashInfer's Hopper single-request prefill, as its JIT template
// (single_prefill_sm90_customize_config.jinja, flashinfer-python 0.7.2.post1) renders it.
// The including file defines DTypeQ, DTypeKV, DTypeO, IdType and PrefillAdditionalParams
// (the variant's additional parameters) first.
#pragma once

struct Params {
  using DTypeQ = ::DTypeQ;
  using DTypeKV = ::DTypeKV;
  using DTypeO = ::DTypeO;
  using IdType = ::IdType;

  // The QKV matrices.
  DTypeQ* q_ptr;
  DTypeKV* k_ptr;
  DTypeKV* v_ptr;
  DTypeO* o_ptr;
  float* lse_ptr;

  // Additional params
  using AdditionalParams = PrefillAdditionalParams;
  AdditionalParams additional_params;

  int64_t q_stride_n;
  int64_t k_stride_n;
  int64_t v_stride_n;
  int64_t o_stride_n;
  int64_t q_stride_h;
  int64_t k_stride_h;
  int64_t v_stride_h;
  int64_t o_stride_h;

  int qo_len;
  int kv_len;
  int head_dim;
  int num_qo_heads;
  int num_kv_heads;
  int group_size;
  int window_left;

  bool causal;
};
