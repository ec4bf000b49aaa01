"""The Rust side of the ``weft`` package (PyO3). Use :func:`weft.verify` instead."""

from typing import Optional

__version__: str

def verify(
    ptx: str,
    *,
    filename: str,
    threads: Optional[list[int]],
    cta: list[int],
    grid: list[int],
    params: list[str],
    warp_sync: bool,
    initializers: bool,
    kernels: list[str],
    detail: bool,
    max_steps: Optional[int],
    max_memory: Optional[int],
    strict: bool,
    max_trips: Optional[int] = None,
) -> tuple[str, list[str]]:
    """Verifies every selected kernel of ``ptx``. Returns the JSON document of
    ``weft --format json`` and each kernel's text rendering (same order). Raises
    ``ValueError`` for a parameter spec that does not parse, or a kernel or parameter that
    names nothing."""
