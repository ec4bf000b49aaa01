"""weft for the CuTe DSL (``nvidia-cutlass-dsl``): verify what ``cute.compile`` produced.

``cute.compile`` keeps the PTX of what it compiled when asked to, and then exposes it as
``compiled.__ptx__``. Ask for it with the ``KeepPTX`` option; the target comes from
``CUTE_DSL_ARCH`` (no GPU is needed with fake tensors)::

    import os
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")   # before importing cutlass
    import cutlass.cute as cute
    import weft.cute

    compiled = cute.compile[cute.KeepPTX](my_jit_function, *fake_tensors)
    for report in weft.cute.verify(compiled):
        report.raise_for_violations()

The DSL reads ``CUTE_DSL_ARCH`` and ``CUTE_DSL_DUMP_DIR`` when it is imported; ``KeepPTX``
also writes the PTX as a file into the dump directory (default: the current directory).
The CTA shape comes from the ``.reqntid`` the DSL writes from ``launch(block=...)``. The DSL
passes tensors as by-value structs: fix a field with a ``--param`` spec such as
``params=["0+8:u32=4096"]`` when weft asks for one.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import weft

__all__ = ["ptx_of", "verify"]


def ptx_of(compiled: Any) -> str:
    """The PTX of a ``cute.compile`` result, or a :class:`ValueError` saying how to keep it."""
    ptx = getattr(compiled, "__ptx__", None)
    if not isinstance(ptx, str) or not ptx:
        raise ValueError(
            "weft.cute: the compiled function holds no PTX; compile it with "
            "cute.compile[cute.KeepPTX](...) (or the option string '--keep-ptx')"
        )
    return ptx


def verify(
    compiled: Any,
    *,
    threads: Optional[weft.Threads] = None,
    params: Optional[weft.Params] = None,
    warp_sync: bool = False,
    kernel: Union[str, Sequence[str], None] = None,
) -> list[weft.KernelReport]:
    """Verifies every kernel of a ``cute.compile`` result (compiled with ``KeepPTX``); the
    arguments mean what they mean for :func:`weft.verify`."""
    name = getattr(compiled, "function_name", None) or "cute"
    return weft.verify(ptx_of(compiled), threads=threads, params=params, warp_sync=warp_sync,
                       kernel=kernel, filename=f"{name}.ptx")
