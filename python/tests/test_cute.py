"""weft.cute on CuTe DSL kernels compiled for sm_90a without a GPU."""

import os
import tempfile

import pytest

# The DSL reads its target and dump directory when it is imported: sm_90a without a GPU, and
# the PTX that KeepPTX also writes as a file goes to a temporary directory.
os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
os.environ.setdefault("CUTE_DSL_DUMP_DIR", tempfile.mkdtemp(prefix="weft-cute-"))
if os.environ.get("WEFT_PYTHON_DSLS") == "required":
    import cutlass.cute  # noqa: F401  (CI: a missing CuTe DSL is a failure, not a skip)
else:
    pytest.importorskip("cutlass.cute")

import weft  # noqa: E402
import weft.cute  # noqa: E402


@pytest.fixture
def cute_kernels():
    import cute_kernels

    return cute_kernels


def test_pipeline_is_verified(cute_kernels):
    [report] = weft.cute.verify(cute_kernels.compile_pipeline_ws(release_early=False))
    assert report.verdict == "verified", report.text
    assert report.cta_shape == (64, 1, 1)  # .reqntid from launch(block=...)
    assert report.stats.dynamic_barriers > 0


def test_releasing_a_stage_before_reading_it_races(cute_kernels):
    [report] = weft.cute.verify(cute_kernels.compile_pipeline_ws(release_early=True))
    assert report.verdict == "violation"
    assert {v.kind for v in report.violations} == {"race"}
    with pytest.raises(weft.VerificationError, match=r"error\[race\]"):
        report.raise_for_violations()


def test_a_compile_without_keep_ptx_says_how_to_keep_it():
    class Compiled:
        __ptx__ = None

    with pytest.raises(ValueError, match="KeepPTX"):
        weft.cute.verify(Compiled())
