// Instantiates the backward attention kernel of CUTLASS example 77_blackwell_fmha
// (77_blackwell_fmha_bwd.cu) so that its PTX can be fed to weft.  The kernel is the one
// `cutlass::fmha::device::Sm100FmhaBwd<...>` launches for dQ/dK/dV
// (`Sm100FmhaBwdKernelTmaWarpSpecialized`, its `Kernel`), with the types the example's
// `BwdRunner` passes for the fp16 build (77_blackwell_fmha_bwd_fp16): Element half_t, fp32
// accumulation, head dim 128 (`run_bwd_128`: tile 128x128x128x128), no mask (`--mask=no`),
// no varlen, not MLA; only this instantiation is ours.  (The example's main() instantiates
// every mask, head dim and varlen combination, plus the sum-OdO and convert kernels.)
// Compiled with the example's flags (--use_fast_math; no -DNDEBUG) and its include
// directory (examples/77_blackwell_fmha) on the path.
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/kernel_hardware_info.h"

#include "collective/fmha_fusion.hpp"
#include "device/fmha_device_bwd.hpp"

using namespace cute;

using Element = cutlass::half_t;
using ElementAccumulator = float;
// Q K D D_VO ((H_R, H_K) B), as BwdRunner<false, false, ...>::ProblemShape.
using ProblemShape = cute::tuple<int, int, int, int, cute::tuple<cute::tuple<int, int>, int>>;
using TileShape = Shape<_128, _128, _128, _128>;

using Operation = cutlass::fmha::device::Sm100FmhaBwd<ProblemShape, Element, ElementAccumulator,
                                                      TileShape, /*IsMla=*/false,
                                                      cutlass::fmha::collective::NoMask>;
using Kernel = typename Operation::Kernel;

// Explicit instantiation: emits the kernel's .entry into the PTX.
template __global__ void cutlass::device_kernel<Kernel>(CUTLASS_GRID_CONSTANT Kernel::Params const);
