"""weft for Triton: verify compiled kernels, or every kernel Triton compiles.

- :func:`verify` checks one compiled kernel: what ``triton.compile(...)`` returns, or a JIT
  kernel's compiled specialization (what ``kernel[grid](...)`` or ``kernel.warmup(...)``
  returns). The CTA has ``num_warps`` × 32 threads; the arguments you pass fix the scalar
  parameters (sizes, strides) by position, so that loops they bound can be emulated.
- :func:`enable` installs weft in Triton's compilation hook
  (``triton.knobs.compilation.listener``, Triton 3.4+): every kernel Triton compiles (or
  loads from its cache) is verified once per compiled kernel hash, and a kernel with a
  violation raises :class:`weft.VerificationError` (``mode="raise"``) or warns
  (``mode="warn"``). The hook sees no argument values: a kernel whose synchronization
  depends on a size argument comes out unverifiable, with a warning naming the argument
  (``unverifiable="warn"``); verify it with :func:`verify` and ``args``.

Everything works without a GPU: compile for a target, e.g.
``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))``.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Optional, Union

import weft

__all__ = [
    "TritonVerificationWarning",
    "UnverifiedWarning",
    "cached_report",
    "disable",
    "enable",
    "param_map",
    "verify",
]

Mode = Literal["raise", "warn"]
UnverifiableMode = Literal["ignore", "warn", "raise"]


class TritonVerificationWarning(UserWarning):
    """``enable(mode="warn")``: a compiled kernel has a violation; the message is weft's text
    rendering."""


class UnverifiedWarning(UserWarning):
    """A compiled kernel could not be verified (its synchronization depends on an input
    the hook cannot see); the message is weft's text rendering, with the reason and a hint."""


# --- the parameter map: Triton signature -> PTX parameter indices ---------------------------

_SCALAR_BITS = {
    "i1": 8, "u1": 8, "i8": 8, "u8": 8, "i16": 16, "u16": 16, "fp16": 16, "bf16": 16,
    "i32": 32, "u32": 32, "fp32": 32, "f32": 32, "i64": 64, "u64": 64, "fp64": 64,
}
_FLOATS = {"fp32", "f32", "fp64"}
_UNBINDABLE = {"fp16", "bf16"}  # 16-bit floats: no `--param` spelling; left unknown


def _descriptor_layout(ty: str, has_meta: bool) -> list[tuple[str, Optional[tuple[str, int]]]]:
    """The PTX parameters of a host tensor descriptor ``tensordesc<T[B0, B1]>``, as Triton's
    launcher lays them out (``triton.backends.driver.expand_signature``): with descriptor
    metadata (a TMA descriptor built on the host), the 128-byte ``CUtensorMap``, then the
    shape (i32 each) and strides (i64 each); without, a base pointer, shape and strides
    (i64), two i1 flags, then shape (i32) and strides (i64) again. Each entry is the PTX
    type and which descriptor field (``shape``/``strides``, index) it holds."""
    m = re.match(r"tensordesc(?:_im2col)?<([^\[>]*)\[([^\]]*)\]", ty)
    if m is None:
        raise _MapError(f"cannot read the tensor descriptor type `{ty}`")
    rank_match = re.search(r",input_rank=(\d+)", ty)
    ndim = int(rank_match.group(1)) if rank_match else m.group(2).count(",") + 1
    out: list[tuple[str, Optional[tuple[str, int]]]] = []
    if has_meta:
        out.append(("nvTmaDesc", None))
    else:
        out.append(("*" + m.group(1), None))
        out += [("i64", ("shape", i)) for i in range(ndim)]
        out += [("i64", ("strides", i)) for i in range(ndim)]
        out += [("i1", None), ("i1", None)]
    out += [("i32", ("shape", i)) for i in range(ndim)]
    out += [("i64", ("strides", i)) for i in range(ndim)]
    return out


class _MapError(Exception):
    pass


def _signature(compiled: Any) -> list[tuple[str, Any]]:
    src = getattr(compiled, "src", None)
    signature = getattr(src, "signature", None)
    if not isinstance(signature, Mapping):
        raise _MapError("the compiled kernel has no Triton signature (it was not compiled from a @triton.jit function)")
    fn = getattr(src, "fn", None)
    names = list(getattr(fn, "arg_names", None) or signature.keys())
    # Triton's code generator declares the kernel's parameters in the function's argument
    # order; the signature names each argument's type.
    missing = [n for n in names if n not in signature]
    if missing:
        raise _MapError(f"the signature lacks argument(s) {missing}")
    return [(name, signature[name]) for name in names]


def param_map(compiled: Any) -> list[tuple[str, str, int]]:
    """How the kernel's arguments map to PTX parameters: one ``(argument, triton_type,
    ptx_index)`` per PTX parameter that an argument fills (constexprs fill none; a tensor
    descriptor fills several, named ``desc.shape[0]`` and so on)."""
    return [(label, ty, index) for label, ty, index, _ in _layout(compiled)]


def _layout(compiled: Any) -> list[tuple[str, str, int, tuple[Any, ...]]]:
    """Per PTX parameter: its label, Triton type, index and how to get its value from the
    arguments (a path: argument position, then tuple indices or a descriptor field)."""
    has_meta = bool(getattr(compiled.metadata, "tensordesc_meta", None))
    out: list[tuple[str, str, int, tuple[Any, ...]]] = []

    def visit(label: str, ty: Any, path: tuple[Any, ...]) -> None:
        if isinstance(ty, tuple):
            for i, t in enumerate(ty):
                visit(f"{label}[{i}]", t, path + (i,))
        elif not isinstance(ty, str):
            raise _MapError(f"argument `{label}` has an unknown signature entry {ty!r}")
        elif ty == "constexpr":
            return
        elif ty.startswith("tensordesc"):
            for t, field in _descriptor_layout(ty, has_meta):
                if field is None:
                    out.append((f"{label}.descriptor", t, len(out), path + (None,)))
                else:
                    out.append((f"{label}.{field[0]}[{field[1]}]", t, len(out), path + (field,)))
        else:
            out.append((label, ty, len(out), path))

    for position, (name, ty) in enumerate(_signature(compiled)):
        visit(name, ty, (position,))
    return out


def _ptx_params(ptx: str, kernel: str) -> list[tuple[str, int, bool, bool]]:
    """The parameters of `.entry kernel(...)`: (kind letter, bits, is an array, is marked
    `.ptr`) each."""
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", ptx, re.S)
    if m is None:
        raise _MapError(f"no `.entry {kernel}` in the PTX")
    out = []
    for decl in m.group(1).split(","):
        decl = decl.strip()
        if not decl:
            continue
        ty = re.search(r"\.([bsuf])(8|16|32|64)\b", decl)
        if not decl.startswith(".param") or ty is None:
            raise _MapError(f"cannot read the PTX parameter declaration `{decl}`")
        is_array = re.search(r"\[\s*\d+\s*\]$", decl) is not None
        out.append((ty.group(1), int(ty.group(2)), is_array, re.search(r"\.ptr\b", decl) is not None))
    return out


def _check_layout(layout: list[tuple[str, str, int, tuple[Any, ...]]], declared: list[tuple[str, int, bool, bool]],
                  name: str) -> None:
    """Refuses a map that disagrees with the PTX: binding a value to the wrong parameter
    could make a verdict false."""
    # Triton appends its scratch pointers (global, profile) after the arguments.
    if not 0 <= len(declared) - len(layout) <= 2:
        raise _MapError(f"the PTX of {name} declares {len(declared)} parameters, but Triton's signature maps to {len(layout)}")
    for label, ty, index, _ in layout:
        kind, bits, is_array, is_ptr = declared[index]
        if ty.startswith("*"):
            fits = bits == 64 and not is_array
        elif ty == "nvTmaDesc":
            fits = is_array
        elif ty in _SCALAR_BITS:
            fits = bits == _SCALAR_BITS[ty] and not is_array and not is_ptr
        else:
            fits = True  # a type weft binds no value to
        if not fits:
            declared_as = f".{kind}{bits}{'[]' if is_array else ''}{' .ptr' if is_ptr else ''}"
            raise _MapError(f"argument `{label}` ({ty}) maps to PTX parameter {index}, declared {declared_as}")


def _value_at(args: Sequence[Any], path: tuple[Any, ...]) -> Any:
    value: Any = args[path[0]] if path[0] < len(args) else None
    for step in path[1:]:
        if value is None:
            return None
        if step is None:  # the descriptor itself
            return None
        if isinstance(step, tuple):  # (field, index) of a tensor descriptor
            seq = getattr(value, step[0], None)
            value = None if seq is None or step[1] >= len(seq) else seq[step[1]]
        else:
            value = value[step] if step < len(value) else None
    return value


def _bindings(compiled: Any, args: Union[Sequence[Any], Mapping[str, Any]], ptx: str) -> dict[int, Union[int, float]]:
    names = [name for name, _ in _signature(compiled)]
    if isinstance(args, Mapping):
        unknown = [k for k in args if k not in names]
        if unknown:
            raise TypeError(f"weft.triton.verify: {compiled.name} has no argument(s) {unknown}; its arguments are {names}")
        positional = [args.get(name) for name in names]
    else:
        positional = list(args)
        if len(positional) > len(names):
            raise TypeError(f"weft.triton.verify: {compiled.name} takes {len(names)} arguments ({names}), got {len(positional)}")
    layout = _layout(compiled)
    _check_layout(layout, _ptx_params(ptx, compiled.name), compiled.name)
    bindings: dict[int, Union[int, float]] = {}
    for label, ty, index, path in layout:
        value = _value_at(positional, path)
        if value is None or ty not in _SCALAR_BITS:
            continue  # pointers, descriptors and omitted arguments stay unknown
        if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars
            value = value.item()
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, (int, float)):
            continue
        if ty in _UNBINDABLE:
            continue
        if ty in _FLOATS:
            value = float(value)
        elif isinstance(value, float):
            if not value.is_integer():
                raise TypeError(f"argument `{label}` is {ty}, got {value!r}")
            value = int(value)
        bindings[index] = value
    return bindings


# --- verification --------------------------------------------------------------------------


def _ptx_of(compiled: Any) -> str:
    asm = getattr(compiled, "asm", None)
    try:
        return asm["ptx"]  # type: ignore[index]
    except (TypeError, KeyError):
        raise TypeError(
            "weft.triton.verify: expected a compiled Triton kernel for an NVIDIA target "
            "(the result of triton.compile(...) or of a JIT kernel launch/warmup), "
            f"got {type(compiled).__name__} without asm['ptx']"
        ) from None


def _threads(metadata: Any, ptx: str, name: str) -> int:
    """One CTA of a Triton kernel: ``num_warps`` warps (``num_ctas`` > 1 makes a cluster of
    such CTAs; weft verifies one CTA and reports cluster-wide synchronization as
    unverifiable). The PTX's ``.reqntid`` must agree: weft does not verify a CTA shape the
    kernel was not compiled for."""
    get = metadata.get if isinstance(metadata, Mapping) else lambda k, d=None: getattr(metadata, k, d)
    threads = int(get("num_warps")) * int(get("warp_size", 32) or 32)
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\(.*?\)\s*([^{]*)\{", ptx, re.S)
    reqntid = m and re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", m.group(1))
    if reqntid:
        declared = 1
        for d in reqntid.groups():
            declared *= int(d or 1)
        if declared != threads:
            raise ValueError(
                f"weft.triton: {name} has num_warps x warp_size = {threads} threads, but its PTX says .reqntid {declared}"
            )
    return threads


def verify(
    compiled: Any,
    args: Union[Sequence[Any], Mapping[str, Any], None] = None,
    *,
    warp_sync: bool = False,
    cta: weft.Threads = 0,
    grid: Optional[weft.Threads] = None,
    strict: bool = False,
) -> weft.KernelReport:
    """Verifies one compiled Triton kernel; returns its :class:`weft.KernelReport`.

    :param compiled: what ``triton.compile(...)`` returns, or a JIT kernel's compiled
        specialization (``kernel[grid](...)``, ``kernel.warmup(...)``).
    :param args: the kernel's arguments as you would call it, by position (constexpr
        positions included; their values are ignored) or as a mapping from argument name.
        Integer and float scalars fix the matching PTX parameters; a tensor descriptor's
        ``shape`` and ``strides`` fix its shape and stride parameters; tensors, pointers and
        ``None`` stay unknown. Triton drops constexprs from the PTX; the map is checked
        against the PTX's declared parameters (see :func:`param_map`).
    :param warp_sync: lanes of a warp run in lock-step.
    :param strict: benign races (same-value writes) count as violations.
    :param cta: the emulated program id (``tl.program_id``), default ``(0, 0, 0)``.
    :param grid: the grid in programs (``tl.num_programs``); default: the smallest grid
        that holds ``cta``.
    :raises TypeError: ``compiled`` is not a compiled Triton kernel for an NVIDIA target,
        or ``args`` does not fit its signature.
    :raises ValueError: the argument map disagrees with the PTX (a Triton version whose
        launcher lays parameters out differently): weft does not guess.
    """
    ptx = _ptx_of(compiled)
    params: dict[Union[int, str], Union[int, float]] = {}
    if args is not None:
        try:
            params.update(_bindings(compiled, args, ptx))
        except _MapError as e:
            raise ValueError(f"weft.triton.verify: {e}") from None
    reports = weft.verify(
        ptx,
        threads=_threads(compiled.metadata, ptx, compiled.name),
        params=params,
        warp_sync=warp_sync,
        kernel=compiled.name,
        cta=cta,
        grid=grid,
        strict=strict,
        filename=f"{compiled.name}.ptx",
    )
    if len(reports) != 1:
        raise ValueError(f"weft.triton.verify: expected one kernel `{compiled.name}` in the PTX, found {len(reports)}")
    return reports[0]


# --- the hook ------------------------------------------------------------------------------

_lock = threading.Lock()
# Per compiled kernel hash: its report, or why weft could not read it.
_cache: dict[str, Union[weft.KernelReport, str]] = {}
_installed: Optional[_Listener] = None


def cached_report(kernel_hash: str) -> Optional[weft.KernelReport]:
    """The report the hook made for the compiled kernel with this hash
    (``compiled.hash``), if it has seen it and could read its PTX."""
    with _lock:
        report = _cache.get(kernel_hash)
    return report if isinstance(report, weft.KernelReport) else None


class _Listener:
    """The callable installed as ``triton.knobs.compilation.listener``; it calls the
    listener that was installed before it, then verifies."""

    def __init__(self, mode: Mode, unverifiable: UnverifiableMode, previous: Any) -> None:
        self.mode = mode
        self.unverifiable = unverifiable
        self.previous = previous

    def __call__(self, *, src: Any, metadata: Mapping[str, Any], metadata_group: Mapping[str, str],
                 times: Any, cache_hit: bool) -> None:
        if self.previous is not None:
            self.previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit)
        ptx_path = next((p for name, p in metadata_group.items() if name.endswith(".ptx")), None)
        if ptx_path is None:
            return  # not an NVIDIA target: nothing weft can read
        kernel_hash = str(metadata["hash"])
        with _lock:
            report = _cache.get(kernel_hash)
        if report is None:
            with open(ptx_path) as f:
                ptx = f.read()
            name = str(metadata["name"])
            try:
                [report] = weft.verify(ptx, threads=_threads(metadata, ptx, name), kernel=name, filename=f"{name}.ptx")
            except (weft.InputError, ValueError) as e:
                # weft could not read this kernel: it is not verified, which is not the
                # kernel's fault (the unverifiable policy applies).
                report = str(e)
            with _lock:
                _cache[kernel_hash] = report
        self.act(report)

    def act(self, report: Union[weft.KernelReport, str]) -> None:
        if isinstance(report, str):
            message = f"weft could not verify this kernel: {report}"
            if self.unverifiable == "raise":
                raise weft.InputError([report], [])
            if self.unverifiable == "warn":
                warnings.warn(UnverifiedWarning(message), stacklevel=2)
        elif report.verdict == "violation":
            if self.mode == "raise":
                raise weft.VerificationError(report)
            warnings.warn(TritonVerificationWarning(report.text.rstrip("\n")), stacklevel=2)
        elif report.verdict == "unverifiable":
            if self.unverifiable == "raise":
                raise weft.VerificationError(report)
            if self.unverifiable == "warn":
                warnings.warn(UnverifiedWarning(report.text.rstrip("\n")), stacklevel=2)


def _knobs() -> Any:
    try:
        from triton import knobs
    except ImportError as e:  # Triton < 3.4 has no knobs module
        raise RuntimeError("weft.triton.enable needs Triton 3.4 or newer (triton.knobs)") from e
    if not hasattr(knobs, "compilation") or not hasattr(type(knobs.compilation), "listener"):
        raise RuntimeError("weft.triton.enable needs triton.knobs.compilation.listener (Triton 3.4 or newer)")
    return knobs


def enable(mode: Mode = "raise", *, unverifiable: UnverifiableMode = "warn") -> None:
    """Verifies every kernel Triton compiles from now on (``triton.compile``, and every JIT
    specialization, including those loaded from Triton's cache), once per compiled kernel
    hash.

    :param mode: ``"raise"``: a kernel with a violation makes the compile raise
        :class:`weft.VerificationError` with weft's diagnostic; ``"warn"``: it warns
        (:class:`TritonVerificationWarning`) and the compile goes on.
    :param unverifiable: what an unverifiable kernel does: ``"warn"``
        (:class:`UnverifiedWarning`, the default), ``"ignore"`` or ``"raise"``.

    Calling it again changes the modes. :func:`disable` restores the listener that was
    installed before.
    """
    global _installed
    if mode not in ("raise", "warn"):
        raise ValueError(f"mode must be 'raise' or 'warn', got {mode!r}")
    if unverifiable not in ("ignore", "warn", "raise"):
        raise ValueError(f"unverifiable must be 'ignore', 'warn' or 'raise', got {unverifiable!r}")
    knobs = _knobs()
    with _lock:
        current = knobs.compilation.listener
        if _installed is not None and current is _installed:
            _installed.mode, _installed.unverifiable = mode, unverifiable
            return
        _installed = _Listener(mode, unverifiable, current)
        knobs.compilation.listener = _installed


def disable() -> None:
    """Removes the hook that :func:`enable` installed (and restores the listener it
    replaced). Cached reports are kept."""
    global _installed
    knobs = _knobs()
    with _lock:
        if _installed is not None and knobs.compilation.listener is _installed:
            knobs.compilation.listener = _installed.previous
        _installed = None
