// FlashAttention-2's forward kernel (PyPI sdist flash-attn 2.8.3.post2,
// csrc/flash_attn/src/flash_fwd_kernel.h and flash_fwd_launch_template.h) in the configuration
// its dispatch launches on an A100 (sm_80) for fp16, head dim 128, no causal mask, no dropout:
// run_mha_fwd_hdim128<cutlass::half_t, false> picks
// Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, half_t> (kBlockM 128, kBlockN 64,
// 4 warps, Q and K in separate shared buffers, Q not kept in registers), and run_flash_fwd's
// switches, for d == 128, no local window, no ALiBi, no softcap, no returned softmax, select
//   flash_fwd_kernel<Traits, Is_dropout=false, Is_causal=false, Is_local=false,
//                    Has_alibi=false, Is_even_MN, Is_even_K=true, Is_softcap=false,
//                    Return_softmax=false>
// with Is_even_MN = WEFT_EVEN_MN (a -D flag): 1 when seqlen_q % 128 == 0, seqlen_k % 64 == 0
// and no cu_seqlens (no row predicates, BlockInfo without varlen), 0 otherwise (every row
// copy predicated on the sequence length, the first V tile's out-of-range rows zero-filled).
// The kernel is FlashAttention's own; this file only takes its address (which instantiates
// it) instead of going through run_flash_fwd, which would instantiate every switch
// combination. The PyTorch headers it includes are stood in for by corpus/src/flash_attn2_stubs
// (torch is not installed; see there). The kernel loads Q once and K/V tiles of 64 keys with
// cp.async (one commit group per tile), and orders them with cp.async.wait_group 0/1 and
// __syncthreads: the next K tile is prefetched while S = Q K^T is computed, the next V tile
// while softmax and O += P V run, the epilogue stages O through shared memory.
#include "flash_fwd_launch_template.h"

#ifndef WEFT_EVEN_MN
#error "define WEFT_EVEN_MN: 1 for the tile-aligned launch, 0 for the general one"
#endif

namespace FLASH_NAMESPACE {
using WeftTraits = Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>;
void *weft_flash_fwd_kernel = reinterpret_cast<void *>(
    &flash_fwd_kernel<WeftTraits, /*Is_dropout=*/false, /*Is_causal=*/false, /*Is_local=*/false,
                      /*Has_alibi=*/false, /*Is_even_MN=*/bool(WEFT_EVEN_MN), /*Is_even_K=*/true,
                      /*Is_softcap=*/false, /*Return_softmax=*/false>);
}  // namespace FLASH_NAMESPACE
