// Instantiates the classic CUTLASS 2.x Ampere GEMM so that its PTX can be fed to weft:
// cutlass::gemm::device::Gemm with OpClassTensorOp and arch::Sm80, fp16 A (row-major) x fp16
// B (column-major) -> fp16 C/D (row-major), fp32 accumulation, and every other template
// argument left at its default (DefaultGemmConfiguration<OpClassTensorOp, Sm80, ...>:
// threadblock 128x256x64, warps 64x64x64 -> 8 warps, mma.sync 16x8x16, 3 stages,
// LinearCombination epilogue, GemmIdentityThreadblockSwizzle, no serial split-K).
//
// Its mainloop is MmaMultistage (cutlass/gemm/threadblock/mma_multistage.h): every thread
// issues cp.async (zfill) copies of A and B tiles into a 3-stage shared-memory ring, closes
// each stage with cp.async.commit_group, and waits with cp.async.wait_group 1 +
// __syncthreads before the warps read a stage with ldmatrix; the epilogue (EpilogueTensorOp)
// reuses the shared memory of the mainloop after cp.async.wait_group 0 + __syncthreads.
//
// Only this instantiation is written here: the kernel is cutlass::Kernel<GemmKernel> from
// cutlass/device_kernel.h, the one cutlass::gemm::device::Gemm launches, compiled from the
// headers of the nvidia-cutlass pip package as shipped (no -DNDEBUG; corpus/build.sh).
#include <cutlass/cutlass.h>
#include <cutlass/device_kernel.h>
#include <cutlass/gemm/device/gemm.h>

using Gemm = cutlass::gemm::device::Gemm<
    cutlass::half_t, cutlass::layout::RowMajor,     // A
    cutlass::half_t, cutlass::layout::ColumnMajor,  // B
    cutlass::half_t, cutlass::layout::RowMajor,     // C, D
    float,                                          // accumulator
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80>;

using GemmKernel = Gemm::GemmKernel;

// Explicit instantiation: emits the kernel's .entry into the PTX (what Gemm::run launches).
template __global__ void cutlass::Kernel<GemmKernel>(GemmKernel::Params);
