// Instantiates the MLA forward kernel of CUTLASS example 77_blackwell_fmha
// (77_blackwell_mla_fwd.cu) so that its PTX can be fed to weft.  The kernel
// (cutlass::device_kernel<Sm100FmhaFwdKernelTmaWarpspecialized<..., Sm100MlaFwdCtx...Schedule>>)
// and every type below are the example's, spelled as its `MlaFwdRunner` spells them for the fp16
// build (77_blackwell_mla_fwd_fp16: Element half_t, fp32 accumulators, half_t output), latent
// head dim 128 + rope 64 (`HeadDim = Shape<_128, _64>`, tile 256x128), no mask (`--mask=no`), no
// varlen, and the persistent tile scheduler (`--persistent`), for which fp16 in and out selects
// the `OrderLoadEpilogue` variant (the load warp and the epilogue share shared memory, ordered by
// a named barrier); only this instantiation is ours.  -DWEFT_PERSISTENT=0 gives the individual
// scheduler (the example's default).  Compiled with the example's flags (--use_fast_math; no
// -DNDEBUG) and its include directory (examples/77_blackwell_fmha) on the path.
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/kernel_hardware_info.h"

#include "collective/fmha_fusion.hpp"
#include "collective/sm100_fmha_fwd_epilogue_tma_warpspecialized.hpp"
#include "collective/sm100_fmha_mla_fwd_mainloop_tma_warpspecialized.hpp"
#include "kernel/fmha_options.hpp"
#include "kernel/fmha_tile_scheduler.hpp"
#include "kernel/sm100_fmha_fwd_kernel_tma_warpspecialized.hpp"

#ifndef WEFT_PERSISTENT
#define WEFT_PERSISTENT 1
#endif

using namespace cute;

using Element = cutlass::half_t;
using ElementAccumulatorQK = float;
using ElementAccumulatorPV = float;
using ElementOut = cutlass::half_t;

// Q K (D_latent D_rope) ((H_G H_R) B), as MlaFwdRunner<..., false, ...>::ProblemShapeRegular.
using ProblemShapeType = cute::tuple<int, int, cute::tuple<int, int>, cute::tuple<cute::tuple<int, int>, int>>;
using StrideQ = cute::tuple<int, _1, cute::tuple<cute::tuple<int, int>, int>>;
using StrideK = cute::tuple<int, _1, cute::tuple<cute::tuple<_0, int>, int>>;
using StrideV = StrideK;
using StrideO = StrideQ;
using StrideLSE = cute::tuple<_1, cute::tuple<cute::tuple<int, int>, int>>;

using HeadDim = Shape<_128, _64>;
using TileShape = Shape<_256, _128, HeadDim>;
using ActiveMask = cutlass::fmha::collective::NoMask;

#if WEFT_PERSISTENT
using TileScheduler = cutlass::fmha::kernel::PersistentTileScheduler;
#else
using TileScheduler = cutlass::fmha::kernel::IndividualTileScheduler;
#endif
// MlaFwdRunner: IsOrderLoadEpilogue = kIsPersistent && sizeof(Element) == sizeof(ElementOut).
using OrderLoadEpilogue = std::conditional_t<WEFT_PERSISTENT != 0, true_type, false_type>;

using Mainloop = cutlass::fmha::collective::Sm100MlaFwdMainloopTmaWarpspecialized<
    Element, ElementAccumulatorQK, ElementAccumulatorPV, TileShape, StrideQ, StrideK, StrideV,
    ActiveMask, Shape<_2, _1, _1>, OrderLoadEpilogue>;
using Kernel = cutlass::fmha::kernel::Sm100FmhaFwdKernelTmaWarpspecialized<
    ProblemShapeType, Mainloop,
    cutlass::fmha::collective::Sm100FmhaFwdEpilogueTmaWarpspecialized<
        ElementOut, ElementAccumulatorPV, typename Mainloop::TileShapePV, StrideO, StrideLSE,
        OrderLoadEpilogue>,
    TileScheduler, cutlass::fmha::kernel::Sm100MlaFwdCtxKernelWarpspecializedSchedule>;

// Explicit instantiation: emits the kernel's .entry into the PTX.
template __global__ void cutlass::device_kernel<Kernel>(CUTLASS_GRID_CONSTANT Kernel::Params const);
