// Instantiates CUTLASS 2.x's GEMM on the warp matrix functions (nvcuda::wmma), so that its
// PTX can be fed to weft: cutlass::gemm::device::Gemm with OpClassWmmaTensorOp and
// arch::Sm70, fp16 A (row-major) x fp16 B (column-major) -> fp32 C/D (row-major), fp32
// accumulation, a 128x128x32 threadblock tile of 64x64x32 warp tiles (4 warps), the
// 16x16x16 WMMA shape and 2 stages: the configuration of CUTLASS's own unit tests for this
// operator class (test/unit/gemm/device/gemm_*_wmma_tensor_op_*_sm70.cu), whose
// DefaultGemmConfiguration<OpClassWmmaTensorOp, ...> gives no default tile shapes.
//
// Its mainloop is MmaPipelined (cutlass/gemm/threadblock/mma_pipelined.h): every thread
// stores its part of the next A and B tiles into the other stage of a 2-stage shared ring
// with st.shared, __syncthreads, and the warps load their fragments with
// wmma::load_matrix_sync (MmaTensorOpWmmaMultiplicandTileIterator,
// gemm/warp/mma_tensor_op_tile_iterator_wmma.h) and multiply with wmma::mma_sync; the
// epilogue (epilogue/threadblock/epilogue.h with TileIteratorWmmaTensorOp) stores each
// accumulator fragment into shared memory with wmma::store_matrix_sync between two
// __syncthreads, and every thread reads the tile back with SharedLoadIterator.
//
// Only this instantiation is written here: the kernel is cutlass::Kernel<GemmKernel> from
// cutlass/device_kernel.h, the one cutlass::gemm::device::Gemm launches, compiled from the
// headers of the nvidia-cutlass pip package as shipped (no -DNDEBUG; corpus/build.sh).
#include <cutlass/cutlass.h>
#include <cutlass/device_kernel.h>
#include <cutlass/gemm/device/gemm.h>

using ElementOutput = float;
using ElementAccumulator = float;

using Gemm = cutlass::gemm::device::Gemm<
    cutlass::half_t, cutlass::layout::RowMajor,     // A
    cutlass::half_t, cutlass::layout::ColumnMajor,  // B
    ElementOutput, cutlass::layout::RowMajor,       // C, D
    ElementAccumulator,
    cutlass::arch::OpClassWmmaTensorOp, cutlass::arch::Sm70,
    cutlass::gemm::GemmShape<128, 128, 32>,  // threadblock tile
    cutlass::gemm::GemmShape<64, 64, 32>,    // warp tile
    cutlass::gemm::GemmShape<16, 16, 16>,    // WMMA shape
    cutlass::epilogue::thread::LinearCombination<
        ElementOutput, 128 / cutlass::sizeof_bits<ElementOutput>::value, ElementAccumulator,
        ElementAccumulator>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 2>;

using GemmKernel = Gemm::GemmKernel;

// Explicit instantiation: emits the kernel's .entry into the PTX (what Gemm::run launches).
template __global__ void cutlass::Kernel<GemmKernel>(GemmKernel::Params);
