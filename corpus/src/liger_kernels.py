"""Compile Liger-Kernel's Triton kernels (pip package liger-kernel 0.8.5, Triton kernels for
LLM training: RMSNorm, LayerNorm, cross entropy, SwiGLU, RoPE) to PTX without a GPU and
without torch, Triton 3.9.0. The kernels are Liger's own @triton.jit functions, unchanged,
imported from the wheel's sources (downloaded by corpus/build.sh, never installed):

    python corpus/src/liger_kernels.py WHICH OUT.ptx SOURCES

WHICH is one of the keys of KERNELS at the bottom; SOURCES is the directory holding the
wheel's `liger_kernel/` tree.

Without torch: a meta-path finder answers every `import torch` / `import torch.xxx` with a
module whose attributes are permissive stand-ins (callable, subscriptable, usable as a base
class, falsy, and a no-op decorator), `torch.version.hip` is None (the NVIDIA code paths), and
the packages `liger_kernel`, `liger_kernel.ops`, `liger_kernel.backends` are registered as
empty modules whose __path__ points at the sources, so that importing
`liger_kernel.ops.rms_norm` runs only that module (never liger_kernel/__init__.py).

Each kernel is compiled with ASTSource(fn, signature, constexprs, attrs) and triton.compile
for GPUTarget("cuda", ARCH, 32); block sizes and num_warps follow Liger's launchers
(`calculate_settings` and friends) for a typical size, noted per kernel. `attrs` marks
pointers and strides divisible by 16, as Triton's launcher does for aligned tensors.
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

class _Stub:
    """Permissive stand-in: any attribute, call, subscript, base class, decorator."""
    def __init__(self, name="torch"): self._n = name
    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"): raise AttributeError(k)
        return _Stub(self._n + "." + k)
    def __call__(self, *a, **k):
        # used as a decorator: return the function unchanged
        if len(a) == 1 and not k and callable(a[0]) and not isinstance(a[0], _Stub): return a[0]
        return _Stub(self._n + "()")
    def __getitem__(self, k): return _Stub(self._n + "[]")
    def __mro_entries__(self, bases): return (object,)
    def __bool__(self): return False
    def __iter__(self): return iter(())
    def __repr__(self): return "<stub %s>" % self._n

class _StubModule(types.ModuleType):
    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"): raise AttributeError(k)
        return _Stub(self.__name__ + "." + k)

class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        m = _StubModule(spec.name); m.__path__ = []; return m
    def exec_module(self, m):
        if m.__name__ == "torch":
            m.__version__ = "2.8.0"
            m.version = types.SimpleNamespace(hip=None, cuda="12.8", __version__="2.8.0")

sys.meta_path.insert(0, _Finder())

# Load liger_kernel.* submodules without running liger_kernel/__init__.py (which imports
# everything, including torch-heavy code): register empty packages pointing at the sources.
def register_sources(src):
    for pkg, sub in (("liger_kernel", "liger_kernel"), ("liger_kernel.ops", "liger_kernel/ops"),
                     ("liger_kernel.backends", "liger_kernel/backends")):
        m = types.ModuleType(pkg)
        m.__path__ = [os.path.join(src, sub)]
        sys.modules[pkg] = m


def kernel(module, name):
    obj = getattr(importlib.import_module("liger_kernel.ops." + module), name)
    return obj.fn if isinstance(obj, triton.runtime.autotuner.Autotuner) else obj


def compile_kernel(module, name, arch, warps, constexprs, types=None, ptr="*fp32", div16=True):
    """types: param -> Triton type for non-constexpr params; defaults: names containing 'ptr'
    (or listed in types) -> `ptr`, anything else -> i32.  constexpr defaults are taken from
    the Python signature when not given."""
    fn = kernel(module, name)
    types = types or {}
    sig, cx, attrs = {}, {}, {}
    for i, p in enumerate(fn.params):
        if p.is_constexpr or p.name in constexprs:
            sig[p.name] = "constexpr"
            cx[p.name] = constexprs[p.name] if p.name in constexprs else p.default
            continue
        t = types.get(p.name, ptr if "ptr" in p.name.lower() and "stride" not in p.name.lower() else "i32")
        sig[p.name] = t
        if div16 and (t.startswith("*") or "stride" in p.name.lower() or p.name in ("n_cols", "hidden_size")):
            attrs[(i,)] = [["tt.divisibility", 16]]
    src = ASTSource(fn=fn, signature=sig, constexprs=cx, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": warps})


F = {"eps": "fp32", "offset": "fp32", "gate_multiplier": "fp32", "beta": "fp32",
     "sum_non_ignore_weight": "fp32", "weight_sum": "fp32", "softcap": "fp32"}


def rms_fwd(arch=90, n=4096):
    # calculate_settings(4096) -> BLOCK 4096, 8 warps; llama casting mode (1), with weight
    return compile_kernel("rms_norm", "_rms_norm_forward_kernel", arch, 8,
                          {"casting_mode": 1, "elementwise_affine": True, "BLOCK_SIZE": n},
                          {**F, "Y_ptr": "*bf16", "X_ptr": "*bf16", "W_ptr": "*bf16"})


def rms_block_bwd(arch=90):
    return compile_kernel("rms_norm", "_block_rms_norm_backward_kernel", arch, 4,
                          {"X_dtype": tl.bfloat16, "casting_mode": 1, "elementwise_affine": True,
                           "BLOCK_SIZE": 128, "BLOCK_ROW": 16, "COMPUTE_DW": True},
                          {**F, "dY_ptr": "*bf16", "dX_ptr": "*bf16", "X_ptr": "*bf16", "W_ptr": "*bf16"})


def ln_bwd(arch=90):
    # grid = sm_count (132 on H100); 8448 rows -> rows_per_program 64 (a constexpr here)
    return compile_kernel("layer_norm", "_layer_norm_backward_kernel", arch, 8,
                          {"rows_per_program": 64, "BLOCK_SIZE": 4096, "COMPUTE_DW": True, "COMPUTE_DB": True},
                          {"X_ptr": "*bf16", "W_ptr": "*bf16", "DX_ptr": "*bf16", "DY_ptr": "*bf16"})


def ce(arch=90, warps=32, **over):
    # V = 128256 (Llama 3) -> BLOCK_SIZE min(32768, next_pow2(V)) = 32768; 32 warps on Hopper,
    # 8 on Blackwell for bf16.  Defaults: mean reduction, no weight, no softcap, with gradients.
    cx = {"lse_square_scale": 0.0, "label_smoothing": 0.0, "reduction": "mean", "softcap": None,
          "RETURN_Z_LOSS": False, "RETURN_TOKEN_ACCURACY": False, "RETURN_PREDICTED_TOKENS": False,
          "BLOCK_SIZE": 32768, "HAS_WEIGHT": False, "HAS_SOFTCAPPING": False, "HAS_GRADIENTS": True}
    cx.update(over)
    types = {**F, "X_ptr": "*bf16", "Y_ptr": "*i64", "predicted_tokens_ptr": "*i64"}
    if cx["softcap"] is not None:
        cx.pop("softcap")
    return compile_kernel("cross_entropy", "liger_cross_entropy_kernel", arch, warps, cx, types)


def swiglu_fwd(arch=90):
    # n_cols 14336 (Llama-3-8B FFN) < 16384 tile threshold -> calculate_settings: 16384, 16 warps
    return compile_kernel("swiglu", "_swiglu_forward_kernel", arch, 16, {"n_cols": 14336, "BLOCK_SIZE": 16384},
                          {**F, "a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16"})


def rope(arch=90, backward=False):
    # Llama-3-8B: 32 q heads, 8 kv heads, head_dim 128 -> BLOCK_SIZE 32, default 4 warps
    return compile_kernel("rope", "_triton_rope", arch, 4,
                          {"bs": 1, "cos_bs": 1, "n_qh": 32, "n_kh": 8, "hd": 128, "pad_n_qh": 32,
                           "pad_n_kh": 8, "pad_hd": 128, "pad_rd": 128, "rd": 128, "BLOCK_SIZE": 32,
                           "BACKWARD_PASS": backward},
                          {"q_ptr": "*bf16", "k_ptr": "*bf16", "cos": "*bf16", "sin": "*bf16"})


KERNELS = {
    "rms-norm-block-bwd-sm90": rms_block_bwd,
    "layer-norm-bwd-sm90": ln_bwd,
    "cross-entropy-sm90": ce,
    "swiglu-fwd-sm90": swiglu_fwd,
    "rope-fwd-sm90": rope,
    "rms-norm-fwd-sm100": lambda: rms_fwd(100),
}


def main(which, out_path, sources):
    register_sources(sources)
    with open(out_path, "w") as f:
        f.write(KERNELS[which]().asm["ptx"])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
