// Instantiates the forward attention kernel of CUTLASS example 77_blackwell_fmha
// (77_blackwell_fmha.cu) so that its PTX can be fed to weft.  The kernel
// (cutlass::device_kernel<Sm100FmhaFwdKernelTmaWarpspecialized<...>>) and every type below are
// the example's, spelled exactly as its `FwdRunner` spells them for the fp16 build
// (77_blackwell_fmha_fp16: Element half_t, fp32 accumulators, half_t output), head dim 128
// (`run_fwd_128`: tile 256x128x128), no mask (`--mask=no`), no varlen; only this
// instantiation is ours.  The example's own main() instantiates every mask, head dim,
// scheduler and varlen combination (48 kernels); this file picks one with
//   -DWEFT_PERSISTENT=0  IndividualTileScheduler (the example's default, `--persistent` off)
//   -DWEFT_PERSISTENT=1  PersistentTileScheduler (`--persistent`)
// Compiled with the example's flags (--use_fast_math; no -DNDEBUG) and its include
// directory (examples/77_blackwell_fmha) on the path.
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/kernel_hardware_info.h"

#include "collective/fmha_fusion.hpp"
#include "collective/sm100_fmha_fwd_epilogue_tma_warpspecialized.hpp"
#include "collective/sm100_fmha_fwd_mainloop_tma_warpspecialized.hpp"
#include "kernel/fmha_options.hpp"
#include "kernel/fmha_tile_scheduler.hpp"
#include "kernel/sm100_fmha_fwd_kernel_tma_warpspecialized.hpp"

#ifndef WEFT_PERSISTENT
#define WEFT_PERSISTENT 0
#endif

using namespace cute;

using Element = cutlass::half_t;
using ElementAccumulatorQK = float;
using ElementAccumulatorPV = float;
using ElementOut = cutlass::half_t;

// Q K D ((H_R, H_K) B), as FwdRunner<false, ...>::ProblemShapeRegular.
using ProblemShapeType = cute::tuple<int, int, int, cute::tuple<cute::tuple<int, int>, int>>;
using StrideQ = cute::tuple<int, _1, cute::tuple<cute::tuple<int, int>, int>>;
using StrideK = cute::tuple<int, _1, cute::tuple<cute::tuple<_0, int>, int>>;
using StrideV = StrideK;
using StrideO = StrideQ;
using StrideLSE = cute::tuple<_1, cute::tuple<cute::tuple<int, int>, int>>;

using TileShape = Shape<_256, _128, _128>;
using ActiveMask = cutlass::fmha::collective::NoMask;

#if WEFT_PERSISTENT
using TileScheduler = cutlass::fmha::kernel::PersistentTileScheduler;
#else
using TileScheduler = cutlass::fmha::kernel::IndividualTileScheduler;
#endif

using Mainloop = cutlass::fmha::collective::Sm100FmhaFwdMainloopTmaWarpspecialized<
    Element, ElementAccumulatorQK, ElementAccumulatorPV, TileShape, StrideQ, StrideK, StrideV,
    ActiveMask>;
using Kernel = cutlass::fmha::kernel::Sm100FmhaFwdKernelTmaWarpspecialized<
    ProblemShapeType, Mainloop,
    cutlass::fmha::collective::Sm100FmhaFwdEpilogueTmaWarpspecialized<
        ElementOut, ElementAccumulatorPV, typename Mainloop::TileShapePV, StrideO, StrideLSE>,
    TileScheduler>;

// Explicit instantiation: emits the kernel's .entry into the PTX (what
// cutlass::fmha::device::FMHA<Kernel>::run launches).
template __global__ void cutlass::device_kernel<Kernel>(CUTLASS_GRID_CONSTANT Kernel::Params const);
