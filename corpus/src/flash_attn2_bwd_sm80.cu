// FlashAttention-2's backward kernel (PyPI sdist flash-attn 2.8.3.post2,
// csrc/flash_attn/src/flash_bwd_kernel.h and flash_bwd_launch_template.h) in the configuration
// its dispatch launches on an A100 (sm_80) for fp16, head dim 128, no causal mask, no dropout:
// run_mha_bwd_hdim128<cutlass::half_t, false> picks, when the device allows at least 144 KB of
// shared memory per block (an A100 allows 163 KB),
// Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, half_t> (kBlockM 64,
// kBlockN 128, 8 warps, AtomLayoutMSdP 2, AtomLayoutNdKV 4, AtomLayoutMdQ 2, V not in
// registers, double-buffered Q/dO), and run_flash_bwd_seqk_parallel's switches, for d == 128,
// no local window, no ALiBi, no softcap, select
//   flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Traits, Is_dropout=false, Is_causal=false,
//       Is_local=false, Has_alibi=false, Is_even_MN=true, Is_even_K=true, Is_softcap=false>
// (Is_even_MN: seqlen_q % 64 == 0, seqlen_k % 128 == 0, no cu_seqlens). The kernel is
// FlashAttention's own; this file only takes its address (which instantiates it) instead of
// going through run_flash_bwd, which would instantiate every switch combination. The PyTorch
// headers it includes are stood in for by corpus/src/flash_attn2_stubs (torch is not
// installed; see there). Each CTA owns one 128-key column block (K, V loaded once by
// cp.async) and loops over the 64-row blocks of Q: Q, dO (double-buffered, prefetched one
// m-block ahead) and LSE/dPsum tiles by cp.async, S = Q K^T, dP = dO V^T, P and dS staged in
// shared memory, dV += P^T dO, dK += dS^T Q, dQ = dS K accumulated into global dQaccum with
// atomicAdd; the epilogue stages dK, dV through shared memory.
#include "flash_bwd_launch_template.h"

namespace FLASH_NAMESPACE {
using WeftBwdTraits = Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t>;
void *weft_flash_bwd_kernel = reinterpret_cast<void *>(
    &flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<WeftBwdTraits, /*Is_dropout=*/false,
        /*Is_causal=*/false, /*Is_local=*/false, /*Has_alibi=*/false, /*Is_even_MN=*/true,
        /*Is_even_K=*/true, /*Is_softcap=*/false>);
}  // namespace FLASH_NAMESPACE
