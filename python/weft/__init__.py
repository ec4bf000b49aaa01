"""weft: a static verifier for PTX kernels that synchronize with named barriers and mbarriers.

For one CTA of a kernel, weft checks every interleaving of its threads: no execution
deadlocks or misuses a barrier, barriers are recycled safely, and no two unordered accesses
to the same shared-memory byte race. Each kernel gets one of three verdicts:

- ``"verified"``: deadlock free, well-synchronized and race free for every interleaving
  and every input (with the parameters you fixed);
- ``"violation"``: each finding names its kind, threads, barriers and source locations;
- ``"unverifiable"``: synchronization or a shared address depends on an input; the reason
  names the instruction, register and input, and a hint says what to pass.

The verifier runs in-process (Rust, through PyO3); it needs no GPU.

>>> import weft
>>> [report] = weft.verify(ptx, threads=128)
>>> report.raise_for_violations()

The Triton integration is in :mod:`weft.triton`, the CuTe DSL helper in :mod:`weft.cute`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional, Union

from . import _native

__all__ = [
    "Assumption",
    "InputError",
    "KernelReport",
    "Location",
    "Stats",
    "ThreadRange",
    "Unverifiable",
    "VerificationError",
    "Violation",
    "verify",
]

__version__: str = _native.__version__

Verdict = Literal["verified", "violation", "unverifiable"]
ParamValue = Union[int, float, bool]
Params = Union[Mapping[Union[int, str], ParamValue], Sequence[str]]
Threads = Union[int, Sequence[int]]


class VerificationError(AssertionError):
    """A kernel did not verify. ``str(error)`` is weft's text rendering of the report
    (diagnostics with source lines, then the summary line); ``error.report`` is the
    :class:`KernelReport`.

    It derives from :class:`AssertionError` so that test runners show it as a failed check.
    """

    def __init__(self, report: KernelReport) -> None:
        super().__init__(report.text.rstrip("\n"))
        self.report = report


class InputError(ValueError):
    """The PTX could not be parsed, has no kernel, or a kernel could not be lowered (e.g. an
    undeclared register). ``errors`` holds each error as ``FILE:LINE:COLUMN: message``; ``reports``
    the reports of the kernels that could be verified."""

    def __init__(self, errors: list[str], reports: list[KernelReport]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors
        self.reports = reports


@dataclass(frozen=True)
class ThreadRange:
    """An inclusive range of linear thread ids (``tid.x + tid.y * ntid.x + ...``)."""

    first: int
    last: int


@dataclass(frozen=True)
class Location:
    """A source position. ``file``/``line``/``column`` are the source position when the
    PTX's ``.loc`` gives one (the CUDA or Python file), else the PTX position;
    ``ptx_file``/``ptx_line``/``ptx_column`` are always the PTX position. Lines and columns
    are 1-based, 0 when unknown."""

    file: str
    line: int
    column: int
    ptx_file: str
    ptx_line: int
    ptx_column: int
    opcode: str
    """The instruction with its modifiers, e.g. ``bar.sync``."""
    label: str
    """What happens here, e.g. ``write of 4 bytes by warp 0 lane 1``."""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> Location:
        return cls(**{k: d[k] for k in _LOCATION_FIELDS})


_LOCATION_FIELDS = ("file", "line", "column", "ptx_file", "ptx_line", "ptx_column", "opcode", "label")


@dataclass(frozen=True)
class Violation:
    """One violation of deadlock freedom, safe recycling, race freedom or a barrier rule."""

    kind: str
    """A stable kebab-case kind: ``deadlock``, ``race``, ``barrier-divergence``,
    ``unsafe-recycling``, ``mbarrier-phase-race``, ... (README, "Reports")."""
    message: str
    locations: list[Location]
    """Every location involved, the most important first."""
    threads: list[ThreadRange]
    threads_text: str
    """The threads as warps and lanes, e.g. ``warp 0 lanes 0-15``."""
    barrier: Optional[int]
    """The named barrier, if one is involved."""
    generation: Optional[int]
    """The 1-based barrier generation, if known."""
    later_generations: list[int]
    """The first generation of each later repeat folded into this violation (same kind,
    barrier, instructions and threads); empty when it does not repeat."""
    notes: list[str]
    benign: bool
    """A benign race (kind ``benign-race``: unordered writes of the same value): a warning
    that leaves the verdict as it is, unless the report is ``strict``."""

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> Violation:
        return cls(
            kind=d["kind"],
            message=d["message"],
            locations=[Location._from_json(x) for x in d["locations"]],
            threads=[ThreadRange(**t) for t in d["threads"]],
            threads_text=d["threads_text"],
            barrier=d["barrier"],
            generation=d["generation"],
            later_generations=list(d.get("later_generations", [])),
            notes=list(d["notes"]),
            benign=bool(d.get("benign", False)),
        )


@dataclass(frozen=True)
class Unverifiable:
    """Why a kernel could not be verified."""

    reason: str
    location: Optional[Location]
    """The instruction to blame, if there is one."""
    related_locations: list[Location]
    register: Optional[str]
    """The register whose value was unknown, e.g. ``%p1``."""
    inputs: list[str]
    """The inputs it depends on, e.g. ``kernel parameter 1 `k_param_1```."""
    hint: Optional[str]
    """What to do about it (often: which parameter to fix with ``params``)."""

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> Unverifiable:
        loc = d["location"]
        return cls(
            reason=d["reason"],
            location=None if loc is None else Location._from_json(loc),
            related_locations=[Location._from_json(x) for x in d["related_locations"]],
            register=d["register"],
            inputs=list(d["inputs"]),
            hint=d["hint"],
        )


@dataclass(frozen=True)
class Assumption:
    """A trap behind an input-dependent branch that the verdict assumes is not reached."""

    kind: str
    """``assertion`` (a ``__assertfail`` call) or ``trap``."""
    message: Optional[str]
    location: Location
    branch: Location

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> Assumption:
        return cls(
            kind=d["kind"],
            message=d["message"],
            location=Location._from_json(d["location"]),
            branch=Location._from_json(d["branch"]),
        )


@dataclass(frozen=True)
class Stats:
    """The WEFT paper's measurements for one kernel; zero when a stage did not run."""

    threads: int
    commands: int
    dynamic_barriers: int
    physical_barriers: int
    shared_addresses: int
    race_tests: int
    naive_race_pairs: int
    instructions: int
    seconds: float


@dataclass(frozen=True)
class KernelReport:
    """Everything weft says about one kernel: the fields of one ``kernels`` entry of
    ``weft --format json`` (README, "JSON"), plus ``text``, the text rendering."""

    file: str
    kernel: str
    """The kernel's name as in the PTX."""
    verdict: Verdict
    cta_shape: Optional[tuple[int, int, int]]
    warp_sync: bool
    strict: bool
    """Whether benign races count as violations."""
    params: list[str]
    """The parameter specs that applied, in ``--param`` syntax."""
    violations: list[Violation]
    unverifiable: list[Unverifiable]
    """Non-empty iff the verdict is ``unverifiable``."""
    assumptions: list[Assumption]
    notes: list[str]
    """Approximations the emulator applied to this kernel."""
    stats: Stats
    text: str
    """The text rendering, as the ``weft`` binary prints it (without color)."""
    coverage: Optional[dict[str, Any]] = None
    """Which problem sizes the verdict covers when branches on unfixed sizes were explored
    (the JSON ``coverage`` object: ``paths``, ``max_trips``, ``complete``, ``ranges``, ``variables``
    with their ``explored`` and ``not_explored`` values, ``periodicity``, ``induction``, …);
    ``None`` when nothing was explored. A verdict with ``complete`` false is bounded, except for
    the values the ``induction`` record covers when it ``concluded`` (docs/induction.md: the
    variables' ``explored`` values then include its family and base); ``periodicity`` (whether
    the explored programs repeat) is evidence only and never widens it."""

    @property
    def verified(self) -> bool:
        """Whether the verdict is ``verified``."""
        return self.verdict == "verified"

    def raise_for_violations(self) -> None:
        """Raises :class:`VerificationError` (with the text rendering) if the kernel has a
        violation. An unverifiable kernel does not raise; see :meth:`raise_unless_verified`."""
        if self.verdict == "violation":
            raise VerificationError(self)

    def raise_unless_verified(self) -> None:
        """Raises :class:`VerificationError` unless the verdict is ``verified``."""
        if self.verdict != "verified":
            raise VerificationError(self)

    def __str__(self) -> str:
        return self.text

    @classmethod
    def _from_json(cls, d: Mapping[str, Any], text: str) -> KernelReport:
        shape = d["cta_shape"]
        return cls(
            file=d["file"],
            kernel=d["kernel"],
            verdict=d["verdict"],
            cta_shape=None if shape is None else tuple(shape),
            warp_sync=d["warp_sync"],
            strict=bool(d.get("strict", False)),
            params=list(d["params"]),
            violations=[Violation._from_json(v) for v in d["violations"]],
            unverifiable=[Unverifiable._from_json(u) for u in d["unverifiable"]],
            assumptions=[Assumption._from_json(a) for a in d["assumptions"]],
            notes=list(d["notes"]),
            stats=Stats(**d["stats"]),
            text=text,
            coverage=d.get("coverage"),
        )


def _dim3(value: Threads, what: str, pad: int = 1) -> list[int]:
    dims = [value] if isinstance(value, int) else list(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise ValueError(f"{what}: expected an int or 1 to 3 ints, got {value!r}")
    if any(d < 0 or d >= 2**32 for d in dims):
        raise ValueError(f"{what}: dimensions must be in 0..2**32, got {value!r}")
    return dims + [pad] * (3 - len(dims))


def _param_specs(params: Optional[Params]) -> list[str]:
    if params is None:
        return []
    if isinstance(params, str):
        raise TypeError("params: expected a mapping or a sequence of specs, got a str")
    if isinstance(params, Mapping):
        specs = []
        for key, value in params.items():
            if isinstance(value, bool):
                value = int(value)
            if not isinstance(value, (int, float)):
                raise TypeError(f"params[{key!r}]: expected an int or a float, got {value!r}")
            if not isinstance(key, (int, str)) or isinstance(key, bool):
                raise TypeError(f"params: keys are parameter indices or names, got {key!r}")
            specs.append(f"{key}={value!r}")
        return specs
    return [str(spec) for spec in params]


def verify(
    ptx: str,
    *,
    threads: Optional[Threads] = None,
    params: Optional[Params] = None,
    warp_sync: bool = False,
    kernel: Union[str, Sequence[str], None] = None,
    cta: Threads = 0,
    grid: Optional[Threads] = None,
    initializers: bool = True,
    filename: str = "<ptx>",
    detail: bool = False,
    max_steps: Optional[int] = None,
    max_memory: Optional[int] = None,
    strict: bool = False,
    max_trips: Optional[int] = None,
) -> list[KernelReport]:
    """Verifies the kernels of a PTX text; returns one :class:`KernelReport` per kernel.

    :param ptx: the PTX text (a whole module, as ``nvcc -ptx`` or Triton writes it).
    :param threads: the CTA shape: ``256``, ``(32, 8)`` or ``(32, 8, 2)``. Default: the
        kernel's ``.reqntid``, else ``.maxntid``; a kernel with neither is unverifiable.
    :param params: fixed parameter values, so that loops and branches they decide can be
        emulated: a mapping from parameter index (0-based, in PTX order) or PTX name to
        an int or float, e.g. ``{5: 256}``; or ``--param`` specs such as
        ``["5=256", "params+12:u32=4096"]`` (a field of a by-value struct); a spec's value
        may be a range, ``"params+12:u32=1.."`` or ``"5=1..=64"``, which fixes nothing but
        keeps the exploration of sizes within it (a precondition; the coverage's
        ``ranges`` lists it).
    :param warp_sync: lanes of a warp run in lock-step (pre-Volta warp-synchronous code).
    :param kernel: verify only this kernel (or these kernels): the PTX name, or the plain
        identifier of an Itanium-mangled name.
    :param cta: the index of the emulated CTA (``%ctaid``), default ``(0, 0, 0)``.
    :param grid: the grid shape in CTAs (``%nctaid``); default: the smallest grid that
        holds ``cta``.
    :param initializers: read initialized ``.global``/``.const`` module variables
        (``__device__`` tables); ``False`` treats them as unknown inputs
        (``--no-initializers``).
    :param filename: the name reports give the PTX; a relative ``.file`` is looked up
        relative to its directory (and to the current directory).
    :param detail: report every racing access pair, not only a representative one.
    :param max_steps: instructions per thread before the kernel is unverifiable
        (``--max-steps``; default: the binary's default).
    :param strict: count benign races (unordered plain writes of the same known value to
        the same bytes) as violations (``--strict``).
    :param max_memory: bytes the verification of one kernel may use before it is reported
        unverifiable (``--max-memory``; default: the binary's default, 3 GiB).
    :param max_trips: choices one branch makes on one problem size per explored path (a
        loop's trips) before larger values are left unexplored (``--max-trips``; default:
        the binary's default, 8).
    :raises ValueError: a parameter spec that does not parse, a ``kernel`` or parameter
        that names nothing in the PTX, or a CTA shape, grid or CTA index outside CUDA's
        limits.
    :raises InputError: the PTX does not parse, has no kernel, or a kernel cannot be
        lowered.
    """
    kernels = [] if kernel is None else [kernel] if isinstance(kernel, str) else list(kernel)
    cta_index = _dim3(cta, "cta", pad=0)
    document, texts = _native.verify(
        ptx,
        filename=filename,
        threads=None if threads is None else _dim3(threads, "threads"),
        cta=cta_index,
        grid=[c + 1 for c in cta_index] if grid is None else _dim3(grid, "grid"),
        params=_param_specs(params),
        warp_sync=bool(warp_sync),
        initializers=bool(initializers),
        kernels=kernels,
        detail=bool(detail),
        max_steps=max_steps,
        max_memory=max_memory,
        strict=bool(strict),
        max_trips=max_trips,
    )
    doc = json.loads(document)
    reports = [KernelReport._from_json(k, t) for k, t in zip(doc["kernels"], texts)]
    # Warnings (a module without a kernel: nothing was verified) count as input errors, as
    # they do for the binary's exit status.
    problems = doc["errors"] + doc.get("warnings", [])
    if problems:
        raise InputError([_describe_error(e) for e in problems], reports)
    return reports


def _describe_error(e: Mapping[str, Any]) -> str:
    where = e["file"]
    if e["line"]:
        where += f":{e['line']}"
        if e["column"]:
            where += f":{e['column']}"
    return f"{where}: {e['message']}"
