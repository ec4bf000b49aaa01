// Instantiates one CUTLASS 3.x Blackwell (sm_100a) GEMM kernel so that its PTX can be fed to
// weft.  The kernel (cutlass::device_kernel<GemmUniversal<...>>) is CUTLASS's; only this
// instantiation is ours.  It follows CUTLASS example 70_blackwell_fp16_gemm (automatic
// kernel and epilogue schedules: TMA warp, tcgen05 MMA warp into tensor memory, epilogue
// warps), with a 1-SM 128x128x64 MMA tile and cluster 1x1x1, because weft checks one CTA and
// the example's 2x2 cluster synchronizes across CTAs.
// FP16 A (row-major) x FP16 B (column-major) -> FP16 C/D, FP32 accumulation.
#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/device_kernel.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

using namespace cute;

using ElementA = cutlass::half_t;
using LayoutA = cutlass::layout::RowMajor;
constexpr int AlignmentA = 128 / cutlass::sizeof_bits<ElementA>::value;
using ElementB = cutlass::half_t;
using LayoutB = cutlass::layout::ColumnMajor;
constexpr int AlignmentB = 128 / cutlass::sizeof_bits<ElementB>::value;
using ElementC = cutlass::half_t;
using LayoutC = cutlass::layout::ColumnMajor;
constexpr int AlignmentC = 128 / cutlass::sizeof_bits<ElementC>::value;
using ElementAccumulator = float;
using ArchTag = cutlass::arch::Sm100;
using OperatorClass = cutlass::arch::OpClassTensorOp;
using MmaTileShape_MNK = Shape<_128, _128, _64>;
using ClusterShape_MNK = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    ArchTag, OperatorClass, MmaTileShape_MNK, ClusterShape_MNK,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator,
    ElementC, LayoutC, AlignmentC, ElementC, LayoutC, AlignmentC,
    cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    ArchTag, OperatorClass, ElementA, LayoutA, AlignmentA, ElementB, LayoutB, AlignmentB,
    ElementAccumulator, MmaTileShape_MNK, ClusterShape_MNK,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::collective::KernelScheduleAuto>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue, void>;

// Explicit instantiation: emits the kernel's .entry into the PTX.
template __global__ void cutlass::device_kernel<GemmKernel>(CUTLASS_GRID_CONSTANT GemmKernel::Params const);
