"""Compile FlashAttention-4's forward kernels (PyPI flash-attn-4, CuTe DSL) to PTX without a GPU
and without torch.

    python corpus/src/fa4_kernels.py fwd-sm90 OUT.ptx SITE
    python corpus/src/fa4_kernels.py fwd-sm100 OUT.ptx SITE
    python corpus/src/fa4_kernels.py bwd-sm90 OUT.ptx SITE
    python corpus/src/fa4_kernels.py fwd-sm100-clc-causal OUT.ptx SITE

SITE is a directory holding the unpacked wheels of flash-attn-4 (`flash_attn/cute/`) and its
helper library quack-kernels (`quack/`); corpus/build.sh downloads both (pinned, --no-deps)
and neither is installed. The kernels are FA4's own classes, unmodified:
`FlashAttentionForwardSm90` (flash_fwd_sm90.py) and `FlashAttentionForwardSm100`
(flash_fwd_sm100.py), constructed as `flash_attn.cute.interface._flash_attn_fwd` constructs them
for fp16, head dim 128, no mask, no GQA, and compiled with `cute.compile` on fake tensors laid
out like the interface's (batch, seqlen, heads, head_dim) tensors, head_dim contiguous, every
other extent and stride dynamic (`mark_layout_dynamic`), as in the CuTe DSL compiles of
corpus/src/cute_dsl_kernels.py (CUTE_DSL_ARCH, CUTE_DSL_KEEP=ptx, a child process).

Without torch: the two packages' `__init__` modules import their torch front ends, so they
are registered here as bare packages (their `__init__` does not run), and the three modules
the kernel files import at module level but never use while compiling (`torch`,
`torch._subclasses.fake_tensor`, `tvm_ffi`: dtype maps, type annotations, decorators) are
served as inert stand-ins whose every attribute is another stand-in. Compiling a kernel
calls none of them; a stand-in reaching the compiler would fail the compile, not change it.

- fwd-sm90: Hopper, as the interface picks for head dim 128 (`_tile_size_fwd_sm90`): 128x128
  tiles, 2 stages, 384 threads (a producer warpgroup and two MMA warpgroups), intra-warpgroup
  overlap, P*V with P in registers.
- fwd-sm100: Blackwell (FlashAttention-4 proper): 128x128 tiles, 2 Q stages, tcgen05 MMA into
  tensor memory, one CTA per cluster, one tile per CTA. The interface would pick the 2-CTA
  variant for this shape (unless 2-CTA is disabled), which synchronizes across the cluster
  (weft verifies one CTA), and its static persistent scheduler, whose grid size asks the
  GPU for its SM count at compile time (`cutlass.utils.HardwareInfo`), which fails without
  a GPU; the single-tile scheduler is the one it uses for causal and varlen attention.
- fwd-sm100-clc-causal: fwd-sm100 with causal masking and FA4's cluster-launch-control
  scheduler (`use_clc_scheduler=True`: `SingleTileLPTScheduler` in `SchedulingMode.CLC`,
  which `flash_attn.cute.config.select_fwd_config` grants for causal or local attention):
  the CTA asks `clusterlaunchcontrol.try_cancel` for its next tile.
- bwd-sm90: `FlashAttentionBackwardSm90` (flash_bwd_sm90.py), constructed as
  `flash_attn.cute.interface._flash_attn_bwd` constructs it for sm_90, fp16, head dim 128, no
  mask, no GQA, not deterministic (`_tile_size_bwd_sm90`: 80x128 tiles, 2 Q/dO/PdS stages,
  SdP_swapAB, dQ_swapAB, 384 threads), with the interface's compile arguments: q, k, v, dout,
  dk, dv as (batch, seqlen, heads, head_dim) fp16 and lse_log2, dpsum, dq_accum as fp32
  (batch, heads, ...) buffers, last mode contiguous, every other extent and stride dynamic;
  no varlen, window, semaphores, aux tensors or block sparsity.
"""
import glob
import importlib.abc
import importlib.machinery
import os
import shutil
import subprocess
import sys
import tempfile
import types

HEAD_DIM = 128
STUBBED = ("torch", "tvm_ffi")


class _Inert:
    """Stands in for any attribute of a stubbed module: attributes, calls, subscripts and
    bases give more stand-ins; used as a bare decorator it returns the function unchanged."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, key):
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        return _Inert(f"{self._name}.{key}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _Inert):
            return args[0]
        return _Inert(f"{self._name}()")

    def __getitem__(self, key):
        return self

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __mro_entries__(self, bases):
        return (object,)

    def __hash__(self):
        return hash(self._name)

    def __eq__(self, other):
        return isinstance(other, _Inert) and other._name == self._name

    def __repr__(self):
        return f"<inert {self._name}>"


class _InertModule(types.ModuleType):
    def __getattr__(self, key):
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        return _Inert(f"{self.__name__}.{key}")


class _InertFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _InertModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def build(which, site):
    sys.meta_path.insert(0, _InertFinder())
    sys.path.insert(0, site)
    for pkg in ("flash_attn", "flash_attn/cute", "quack"):
        module = types.ModuleType(pkg.replace("/", "."))
        module.__path__ = [os.path.join(site, pkg)]
        sys.modules[module.__name__] = module
    import quack.dsl  # noqa: F401  (quack's CuTe tensor indexing patches, as its __init__ does)

    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor
    from cutlass.runtime import make_fake_stream

    def bshd():
        # (batch, seqlen, heads, head_dim), head_dim contiguous; 16-byte aligned strides.
        shape = (cute.sym_int32(), cute.sym_int32(), cute.sym_int32(), HEAD_DIM)
        stride = (cute.sym_int64(divisibility=8), cute.sym_int64(divisibility=8),
                  cute.sym_int64(divisibility=8), 1)
        return make_fake_tensor(cutlass.Float16, shape, stride, assumed_align=16)

    q, k, v, o = (bshd() for _ in range(4))
    # LSE: (batch, heads, seqlen) fp32, seqlen contiguous.
    lse = make_fake_tensor(cutlass.Float32,
                           (cute.sym_int32(), cute.sym_int32(), cute.sym_int32()),
                           (cute.sym_int64(), cute.sym_int64(), 1), assumed_align=4)
    softmax_scale = HEAD_DIM ** -0.5
    if which == "fwd-sm90":
        from flash_attn.cute.flash_fwd_sm90 import FlashAttentionForwardSm90
        fa = FlashAttentionForwardSm90(
            cutlass.Float16, HEAD_DIM, HEAD_DIM, 1, is_causal=False, is_local=False,
            pack_gqa=False, tile_m=128, tile_n=128, num_stages=2, num_threads=384,
            Q_in_regs=False, intra_wg_overlap=True, mma_pv_is_rs=True)
    elif which == "fwd-sm100":
        from flash_attn.cute.flash_fwd_sm100 import FlashAttentionForwardSm100
        fa = FlashAttentionForwardSm100(
            HEAD_DIM, HEAD_DIM, 1, is_causal=False, is_local=False, pack_gqa=False,
            m_block_size=128, n_block_size=128, q_stage=2, is_static_persistent=False,
            use_2cta_instrs=False)
    elif which == "fwd-sm100-clc-causal":
        from flash_attn.cute.flash_fwd_sm100 import FlashAttentionForwardSm100
        fa = FlashAttentionForwardSm100(
            HEAD_DIM, HEAD_DIM, 1, is_causal=True, is_local=False, pack_gqa=False,
            m_block_size=128, n_block_size=128, q_stage=2, is_static_persistent=False,
            use_2cta_instrs=False, use_clc_scheduler=True)
    elif which == "bwd-sm90":
        return build_bwd_sm90(cutlass, cute, make_fake_tensor, make_fake_stream, bshd)
    else:
        raise SystemExit(f"unknown kernel {which}")
    cute.compile(fa, q, k, v, o, lse, softmax_scale, stream=make_fake_stream())


def build_bwd_sm90(cutlass, cute, make_fake_tensor, make_fake_stream, bshd):
    """FlashAttentionBackwardSm90 as `flash_attn.cute.interface._flash_attn_bwd` builds it for
    sm_90, fp16, head dim 128, no mask, no GQA (`_tile_size_bwd_sm90`: tile_m 80, tile_n 128,
    2 Q/dO/PdS stages, SdP_swapAB, dQ_swapAB (80 % 64 != 0), AtomLayoutMSdP 1,
    AtomLayoutNdKV 2, AtomLayoutMdQ 1, two MMA warpgroups: 384 threads), called with the
    interface's compile arguments (no varlen, no window, no semaphores: not deterministic)."""
    from flash_attn.cute.flash_bwd_sm90 import FlashAttentionBackwardSm90
    from flash_attn.cute.utils import AuxData

    q, k, v, do, dk, dv = (bshd() for _ in range(6))

    def fp32(rank):
        # The interface's fp32 (batch, heads, ...) buffers: lse_log2 and dpsum (b, h,
        # seqlen_q_rounded), dq_accum (b, h, seqlen_q_rounded * head_dim_rounded); the last
        # mode contiguous, every extent and other stride dynamic.
        shape = tuple(cute.sym_int32() for _ in range(rank))
        stride = tuple(cute.sym_int64(divisibility=4) for _ in range(rank - 1)) + (1,)
        return make_fake_tensor(cutlass.Float32, shape, stride, assumed_align=16)

    lse_log2, dpsum, dq_accum = fp32(3), fp32(3), fp32(3)
    fa = FlashAttentionBackwardSm90(
        cutlass.Float16, HEAD_DIM, HEAD_DIM, 1, False, is_local=False, deterministic=False,
        tile_m=80, tile_n=128, Q_stage=2, dO_stage=2, PdS_stage=2, SdP_swapAB=True,
        dKV_swapAB=False, dQ_swapAB=True, AtomLayoutMSdP=1, AtomLayoutNdKV=2,
        AtomLayoutMdQ=1, num_threads=384, V_in_regs=False, q_subtile_factor=2,
        dQ_single_wg=False)
    cute.compile(fa, q, k, v, do, lse_log2, dpsum, dq_accum, dk, dv, HEAD_DIM ** -0.5,
                 None, None, None, None, None, None, None, None, None, AuxData(None, None),
                 None, None, make_fake_stream())


def main(which, out_path, site):
    arch = {"fwd-sm90": "sm_90a", "fwd-sm100": "sm_100a", "bwd-sm90": "sm_90a",
            "fwd-sm100-clc-causal": "sm_100a"}[which]
    compile_in_child(__file__, which, arch, out_path, site)


def compile_in_child(script, which, arch, out_path, site):
    """Runs `script --child which site` with the CuTe DSL dumping its PTX for `arch` into a
    temporary directory, and copies the one PTX file it writes to `out_path`."""
    with tempfile.TemporaryDirectory() as tmp:
        dump, cache = os.path.join(tmp, "dump"), os.path.join(tmp, "cache")
        os.makedirs(dump)
        os.makedirs(cache)
        env = dict(os.environ, CUTE_DSL_ARCH=arch, CUTE_DSL_KEEP="ptx", CUTE_DSL_LINEINFO="1",
                   CUTE_DSL_DUMP_DIR=dump, CUTE_DSL_CACHE_DIR=cache)
        subprocess.run([sys.executable, script, "--child", which, os.path.abspath(site)],
                       env=env, stdout=subprocess.DEVNULL, check=True)
        ptx = glob.glob(os.path.join(dump, "*.ptx"))
        if len(ptx) != 1:
            raise SystemExit(f"expected one PTX in the dump directory, found {ptx}")
        shutil.copy(ptx[0], out_path)
        print(os.path.basename(ptx[0]))


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        build(sys.argv[2], sys.argv[3])
    else:
        main(*sys.argv[1:])
