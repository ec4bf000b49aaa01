"""Compile quack-kernels' (PyPI quack-kernels, Tri Dao's CuTe DSL kernels) reduction kernels
and GEMMs to PTX without a GPU and without torch.

    python corpus/src/quack_kernels.py WHICH OUT.ptx SITE

SITE is a directory holding the unpacked quack-kernels wheel (`quack/`); corpus/build.sh
downloads it (pinned, --no-deps, with flash-attn-4: corpus/src/fa4_kernels.py) and it is not
installed. Torch and tvm_ffi are served as inert stand-ins, and `quack` is registered as a bare
package (its `__init__` imports the torch front ends), exactly as corpus/src/fa4_kernels.py
does (its helpers are imported from there), plus the few torch names quack reads while
importing (see `setup`). Each kernel is compiled by quack's own compile
function (the function its torch front end calls, undecorated from its `jit_cache` by
`__wrapped__`), unmodified, except that `cute.compile` runs without `--enable-tvm-ffi` and the
fake stream is a plain one (no TVM-FFI environment stream): the launch ABI is then the CuTe DSL
default (the kernel's PTX is the same). The launch configuration each front end picks from its
heuristic for the GPU is picked here for CUTE_DSL_ARCH, always the single-CTA (cluster size 1)
variant where the heuristic gives it for the size:

- softmax-fwd-sm90: `Softmax` (online softmax), bf16 in/out, N = 4096 (128 threads, 64
  threads per row, cluster 1).
- softmax-bwd-sm90: `SoftmaxBackward`, bf16 dy/y/dx, N = 4096.
- rmsnorm-fwd-sm90: `RMSNorm` forward, bf16 x/out, bf16 weight, fp32 rstd, no bias/residual,
  N = 4096, `RmsNormFwdConfig.from_analytical_heuristic(arch_major=9)` (cluster 1).
- rmsnorm-bwd-sm90: `RMSNormBackward` (persistent over rows, cp.async double-buffered
  x/dout ring), bf16 x/dout/dx, bf16 weight, fp32 dw_partial, N = 4096, the Hopper heuristic
  (cluster 1, cp.async).
- rmsnorm-bwd-n256-sm90: the same at N = 256 (32 threads per row, 4 rows per CTA tile: the
  dw partials are summed through shared memory, over the x ring, after the row loop).
- rmsnorm-bwd-sm100: the same for sm_100a with the Blackwell heuristic for fp32 x/dout,
  N = 8192 (row bytes 32 KB: cluster 1, 256 threads, TMA loads of x and dout into a 2-stage
  PipelineTmaAsync ring), fp32 weight and dw_partial.
- layernorm-fwd-sm90, layernorm-bwd-sm90: the same kernels as LayerNorm (`is_layernorm`):
  forward with bf16 bias and fp32 mean/rstd (two reductions per row), backward with dw and
  db partials (two values per row through a pair of reduction slots), N = 4096.
- cross-entropy-fwd-sm90: `CrossEntropy` (online softmax, no dx), bf16 logits, int64
  targets, fp32 loss and lse, N = 4096.
- cross-entropy-fwd-dx-sm90: the fused forward+backward (`has_dx`: two-stage max/sum
  reduction, writes dx), same types.
- topk-sm90: `TopK`, bf16, N = 4096, k = 32 (bitonic sort in registers, warp shuffles).
- gemm-sm90: `GemmDefaultSm90` (gemm_default_epi.py; quack's GemmSm90 with its default
  epilogue D = A @ B), warp-specialized persistent (a TMA producer warpgroup, two wgmma
  consumer warpgroups), bf16 A (m, k) k-major, B (n, k) k-major, D (m, n) n-major, no C, no
  alpha/beta/bias, batched, fp32 accumulator, pingpong, 128x192 tile as quack's default
  SM90 config but cluster 1x1x1 (the default is 2x1), static persistent scheduler.
- gemm-sm90-cluster2: the same with quack's default cluster 2x1x1 (TMA multicast,
  cluster-wide barriers).
- gemm-sm90-dynamic: gemm-sm90 with quack's dynamic persistent scheduler
  (is_dynamic_persistent: the scheduler warp takes each next tile from a global tile counter,
  `atom.global.inc` on tile_count_semaphore).
- gemm-sm90-coop-c: `GemmDefaultSm90` cooperative (both consumer warpgroups on one tile),
  256x128 tile, cluster 1x1x1, with a C operand (bf16, n-major) and a host beta (mode 1):
  the epilogue loads C by TMA.
- gemm-sm100: `GemmDefaultSm100`, same operands, 128x128 tile, cluster 1x1x1, static
  persistent scheduler (is_dynamic_persistent=False: no cluster launch control), tcgen05
  MMA into tensor memory.
"""
import os
import sys
import types

ARCH = {
    "softmax-fwd-sm90": "sm_90a",
    "softmax-bwd-sm90": "sm_90a",
    "rmsnorm-fwd-sm90": "sm_90a",
    "rmsnorm-bwd-sm90": "sm_90a",
    "rmsnorm-bwd-n256-sm90": "sm_90a",
    "rmsnorm-bwd-sm100": "sm_100a",
    "layernorm-fwd-sm90": "sm_90a",
    "layernorm-bwd-sm90": "sm_90a",
    "cross-entropy-fwd-sm90": "sm_90a",
    "cross-entropy-fwd-dx-sm90": "sm_90a",
    "topk-sm90": "sm_90a",
    "gemm-sm90": "sm_90a",
    "gemm-sm90-cluster2": "sm_90a",
    "gemm-sm90-coop-c": "sm_90a",
    "gemm-sm90-dynamic": "sm_90a",
    "gemm-sm100": "sm_100a",
}


def setup(site):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fa4_kernels import _Inert, _InertFinder

    sys.meta_path.insert(0, _InertFinder())
    # rmsnorm.py registers torch custom ops at import (`torch.library.custom_op(name, fn)` or as a
    # decorator, then `@op.register_fake`): the op is the function itself, with inert hooks.
    import torch.library

    def custom_op(*args, **kwargs):
        def register(fn):
            fn.register_fake = fn.register_autograd = fn.register_kernel = lambda *a, **k: (
                a[0] if len(a) == 1 and callable(a[0]) else (lambda f: f))
            return fn
        fn = args[1] if len(args) > 1 else kwargs.get("fn")
        return register(fn) if callable(fn) else register

    torch.library.custom_op = custom_op
    # quack/blockscaled/quantize.py (imported by the GEMM) raises torch._dynamo's
    # recompile limit at import: `max(limit, 64)` needs a number.
    import torch._dynamo.config

    torch._dynamo.config.recompile_limit = torch._dynamo.config.cache_size_limit = 8
    # isinstance checks at import and compile time: every stand-in dtype (torch.float8_e4m3fn,
    # ...) is a torch.dtype; nothing here is a torch.Tensor.
    torch.dtype = _Inert
    torch.Tensor = type("Tensor", (), {})
    # quack/blockscaled/operand.py builds its format table at import from dtype sizes.
    for name, size in (("uint8", 1), ("int8", 1), ("float8_e4m3fn", 1), ("float8_e5m2", 1),
                       ("float8_e8m0fnu", 1), ("float4_e2m1fn_x2", 1), ("float16", 2),
                       ("bfloat16", 2), ("float32", 4), ("int32", 4), ("int64", 8)):
        dtype = _Inert(f"torch.{name}")
        dtype.itemsize = size
        setattr(torch, name, dtype)
    sys.path.insert(0, site)
    module = types.ModuleType("quack")
    module.__path__ = [os.path.join(site, "quack")]
    module.__version__ = "0.6.5"  # quack/autotuner.py imports it from the package
    sys.modules["quack"] = module
    import quack.dsl  # noqa: F401  (quack's CuTe tensor indexing patches, as its __init__ does)

    import cutlass.cute as cute

    compile_og = cute.compile
    stream_og = cute.runtime.make_fake_stream

    def compile_without_tvm_ffi(*args, options=None, **kwargs):
        if options:
            options = options.replace("--enable-tvm-ffi", "").strip()
        if options:
            kwargs["options"] = options
        return compile_og(*args, **kwargs)

    def plain_fake_stream(use_tvm_ffi_env_stream=False):
        return stream_og()

    cute.compile = compile_without_tvm_ffi
    cute.runtime.make_fake_stream = plain_fake_stream

    # The GPU's compute capability (quack asks torch.cuda; rmsnorm.py's autotuner config
    # lists ask it at import): the compile target's.
    import quack.cute_dsl_utils

    capability = (int(os.environ["CUTE_DSL_ARCH"][3]), int(os.environ["CUTE_DSL_ARCH"][4]))
    quack.cute_dsl_utils.get_device_capacity = lambda device=None: capability


def build(which, site):
    setup(site)
    from cutlass import BFloat16, Float32, Int64

    if which == "softmax-fwd-sm90":
        from quack.softmax import Softmax
        Softmax.compile.__wrapped__(BFloat16, BFloat16, 4096)
    elif which == "softmax-bwd-sm90":
        from quack.softmax import SoftmaxBackward
        SoftmaxBackward.compile.__wrapped__(BFloat16, BFloat16, BFloat16, 4096)
    elif which == "rmsnorm-fwd-sm90":
        from quack.rmsnorm import _compile_rmsnorm_fwd
        from quack.rmsnorm_config import RmsNormFwdConfig
        N = 4096
        config = RmsNormFwdConfig.from_analytical_heuristic(N, 16, arch_major=9)
        # dtype, out, res, weight, bias, res_out, N, has_rstd, has_mean, is_layernorm, per_head
        _compile_rmsnorm_fwd.__wrapped__(BFloat16, BFloat16, None, BFloat16, None, None, N,
                                         True, False, False, False, 0.0, config)
    elif which in ("rmsnorm-bwd-sm90", "rmsnorm-bwd-n256-sm90", "rmsnorm-bwd-sm100"):
        from quack.rmsnorm import _compile_rmsnorm_bwd
        from quack.rmsnorm_config import RmsNormBwdConfig
        if which.endswith("sm90"):
            N, dt, major = (256 if "-n256-" in which else 4096), BFloat16, 9
        else:
            N, dt, major = 8192, Float32, 10
        config = RmsNormBwdConfig.from_analytical_heuristic(N, dt.width, dt.width,
                                                            arch_major=major, num_acc=1)
        # N, dtype, dout, dx, weight, has_db_partial, dres, dres_out, has_dw_partial
        _compile_rmsnorm_bwd.__wrapped__(N, dt, dt, dt, dt, False, None, None, True,
                                         False, 0, False, 0.0, config)
    elif which == "layernorm-fwd-sm90":
        from quack.rmsnorm import _compile_rmsnorm_fwd
        from quack.rmsnorm_config import RmsNormFwdConfig
        N = 4096
        config = RmsNormFwdConfig.from_analytical_heuristic(N, 16, arch_major=9,
                                                            is_layernorm=True)
        _compile_rmsnorm_fwd.__wrapped__(BFloat16, BFloat16, None, BFloat16, BFloat16, None, N,
                                         True, True, True, False, 0.0, config)
    elif which == "layernorm-bwd-sm90":
        from quack.rmsnorm import _compile_rmsnorm_bwd
        from quack.rmsnorm_config import RmsNormBwdConfig
        N = 4096
        config = RmsNormBwdConfig.from_analytical_heuristic(N, 16, 16, arch_major=9, num_acc=2)
        # ..., has_db_partial, dres, dres_out, has_dw_partial, per_head, T_hint, is_layernorm
        _compile_rmsnorm_bwd.__wrapped__(N, BFloat16, BFloat16, BFloat16, BFloat16, True, None,
                                         None, True, False, 0, True, 0.0, config)
    elif which.startswith("cross-entropy-fwd"):
        from quack.cross_entropy import CrossEntropy
        has_dx = which.endswith("-dx-sm90")
        # dtype, target, target_logit, N, has_lse, has_dx, weight, target_logit_ndim
        CrossEntropy.compile.__wrapped__(BFloat16, Int64, None, 4096, True, has_dx, None, 1)
    elif which == "topk-sm90":
        from quack.topk import TopK
        TopK.compile.__wrapped__(BFloat16, 4096, 32, False)
    elif which.startswith("gemm-"):
        from quack.gemm import _compile_gemm
        from quack.rounding import RoundingMode
        c_dtype, c_major, beta_mode = None, None, 0
        if which == "gemm-sm90":
            tile, cluster, pingpong, dyn, cap = (128, 192), (1, 1, 1), True, False, (9, 0)
        elif which == "gemm-sm90-dynamic":
            tile, cluster, pingpong, dyn, cap = (128, 192), (1, 1, 1), True, True, (9, 0)
        elif which == "gemm-sm90-coop-c":
            tile, cluster, pingpong, dyn, cap = (256, 128), (1, 1, 1), False, False, (9, 0)
            c_dtype, c_major, beta_mode = BFloat16, "n", 1
        elif which == "gemm-sm90-cluster2":
            tile, cluster, pingpong, dyn, cap = (128, 192), (2, 1, 1), True, False, (9, 0)
        else:
            tile, cluster, pingpong, dyn, cap = (128, 128), (1, 1, 1), False, False, (10, 0)
        _compile_gemm.__wrapped__(
            BFloat16, BFloat16, BFloat16, c_dtype,  # A, B, D, C dtypes
            "k", "k", "n", c_major,  # majors
            tile, cluster, pingpong, True, dyn,  # persistent, is_dynamic_persistent
            None, None, 0,  # rowvec, colvec dtypes, colvec_ndim
            0, beta_mode, False, None,  # alpha/beta modes, add_to_output, concat_layout
            False, False, False, False, False,  # varlen_m/k, gather_A, tma gather, permute
            cap, RoundingMode.RN, 0, None)  # device capacity, rounding, sr_seed, num_warps
    else:
        raise SystemExit(f"unknown kernel {which}")


def main(which, out_path, site):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fa4_kernels import compile_in_child

    compile_in_child(__file__, which, ARCH[which], out_path, site)

if __name__ == "__main__":
    if sys.argv[1] == "--child":
        build(sys.argv[2], sys.argv[3])
    else:
        main(*sys.argv[1:])
