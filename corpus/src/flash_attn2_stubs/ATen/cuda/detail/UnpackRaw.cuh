// Stand-in for PyTorch's ATen/cuda/detail/UnpackRaw.cuh (see CUDAGeneratorImpl.h here), with
// PyTorch's definition of at::cuda::philox::unpack. FlashAttention-2's forward kernel calls it
// on every path, but uses the seed and offset only with dropout (not instantiated here).
#pragma once
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <tuple>
namespace at::cuda::philox {
__host__ __device__ __forceinline__ std::tuple<uint64_t, uint64_t> unpack(at::PhiloxCudaState arg) {
  if (arg.captured_) {
    return std::make_tuple(static_cast<uint64_t>(*arg.seed_.ptr),
                           static_cast<uint64_t>(*(arg.offset_.ptr) + arg.offset_intragraph_));
  } else {
    return std::make_tuple(arg.seed_.val, arg.offset_.val);
  }
}
}  // namespace at::cuda::philox
