// Stand-in for PyTorch's c10/cuda/CUDAException.h (see ../../ATen/cuda/CUDAGeneratorImpl.h):
// FlashAttention-2's host-side launch code checks CUDA errors with these macros.
#pragma once
#define C10_CUDA_CHECK(EXPR) (void)(EXPR)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() (void)0
