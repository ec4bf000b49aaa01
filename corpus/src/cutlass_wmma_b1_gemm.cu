// Instantiates CUTLASS 2.x's binary GEMM on the warp matrix functions, so that its PTX can be
// fed to weft: cutlass::gemm::device::Gemm with OpClassWmmaTensorOp, arch::Sm75 and
// OpXorPopc, 1-bit A (row-major) x 1-bit B (column-major) -> int32 C/D (row-major), int32
// accumulation, a 128x256x512 threadblock tile of 64x64x512 warp tiles (8 warps), the
// 8x8x128 WMMA shape and 2 stages: the configuration of CUTLASS's own unit test for this
// operator class and type (test/unit/gemm/device/gemm_b1t_b1n_s32t_wmma_tensor_op_s32_sm75.cu).
//
// The same MmaPipelined mainloop and shared-memory epilogue as corpus/src/cutlass_wmma_gemm.cu,
// with sub-byte operands: the warps load their fragments with
// wmma.load.{a,b}.sync.aligned.{row,col}.m8n8k128.shared.b1 (a row of 128 one-bit elements
// is 16 bytes, the stride counted in elements, that is bits), multiply with
// wmma.mma.xor.popc, and the epilogue stores its accumulators with
// wmma.store.d.sync.aligned.row.m8n8k128.shared.s32.
//
// Only this instantiation is written here: the kernel is cutlass::Kernel<GemmKernel>, compiled
// from the headers of the nvidia-cutlass pip package as shipped (no -DNDEBUG; corpus/build.sh).
#include <cutlass/cutlass.h>
#include <cutlass/device_kernel.h>
#include <cutlass/gemm/device/gemm.h>

using ElementOutput = int32_t;
using ElementAccumulator = int32_t;

using Gemm = cutlass::gemm::device::Gemm<
    cutlass::uint1b_t, cutlass::layout::RowMajor,     // A
    cutlass::uint1b_t, cutlass::layout::ColumnMajor,  // B
    ElementOutput, cutlass::layout::RowMajor,         // C, D
    ElementAccumulator,
    cutlass::arch::OpClassWmmaTensorOp, cutlass::arch::Sm75,
    cutlass::gemm::GemmShape<128, 256, 512>,  // threadblock tile
    cutlass::gemm::GemmShape<64, 64, 512>,    // warp tile
    cutlass::gemm::GemmShape<8, 8, 128>,      // WMMA shape
    cutlass::epilogue::thread::LinearCombination<
        ElementOutput, 128 / cutlass::sizeof_bits<ElementOutput>::value, ElementAccumulator,
        ElementAccumulator>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 2,
    128, 128,  // alignment of A and B in elements (bits)
    false,     // no serial split-K
    cutlass::arch::OpXorPopc>;

using GemmKernel = Gemm::GemmKernel;

// Explicit instantiation: emits the kernel's .entry into the PTX (what Gemm::run launches).
template __global__ void cutlass::Kernel<GemmKernel>(GemmKernel::Params);
