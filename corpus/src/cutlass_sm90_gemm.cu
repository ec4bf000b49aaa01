// Instantiates one CUTLASS 3.x Hopper warp-specialized GEMM kernel so that its PTX can be
// fed to weft.  The kernel (cutlass::device_kernel<GemmUniversal<...>>) is CUTLASS's; only
// this instantiation is ours.  Pick the mainloop schedule with -DWEFT_SCHEDULE=N:
//   1 = KernelTmaWarpSpecialized            (1 producer + 1 consumer warpgroup)
//   2 = KernelTmaWarpSpecializedPingpong    (1 producer + 2 ping-ponging consumers)
//   3 = KernelTmaWarpSpecializedCooperative (1 producer + 2 cooperating consumers)
// FP16 A (row-major) x FP16 B (column-major) -> FP16 C/D, FP32 accumulation, 128x128x64
// tiles, cluster 1x1x1 (one CTA: no multicast across a cluster).
#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/device_kernel.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#ifndef WEFT_SCHEDULE
#define WEFT_SCHEDULE 1
#endif

using namespace cute;

#if WEFT_SCHEDULE == 1
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecialized;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#elif WEFT_SCHEDULE == 2
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
#endif

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
using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator,
    ElementC, LayoutC, AlignmentC, ElementC, LayoutC, AlignmentC, EpilogueSchedule>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, AlignmentA, ElementB,
    LayoutB, AlignmentB, ElementAccumulator, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    MainloopSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue>;

// Explicit instantiation: emits the kernel's .entry into the PTX.
template __global__ void cutlass::device_kernel<GemmKernel>(CUTLASS_GRID_CONSTANT GemmKernel::Params const);
