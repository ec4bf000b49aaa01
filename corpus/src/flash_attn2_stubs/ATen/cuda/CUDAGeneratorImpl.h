// Stand-in for PyTorch's ATen/cuda/CUDAGeneratorImpl.h (torch is not installed for the corpus
// build): FlashAttention-2's flash.h includes it only for at::PhiloxCudaState, a member of
// Flash_fwd_params. Declared with PyTorch's layout (ATen/cuda/PhiloxCudaState.h: two 8-byte
// payload unions, a u32 intragraph offset, a bool) so that the params struct's field offsets
// are those of the real build.
#pragma once
#include <cstdint>
namespace at {
struct PhiloxCudaState {
  PhiloxCudaState() = default;
  union Payload {
    uint64_t val;
    int64_t* ptr;
  };
  Payload seed_{};
  Payload offset_{};
  uint32_t offset_intragraph_ = 0;
  bool captured_ = false;
};
}  // namespace at
