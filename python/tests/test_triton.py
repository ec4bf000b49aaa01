"""weft.triton on kernels compiled for sm_90a and sm_100a without a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

if os.environ.get("WEFT_PYTHON_DSLS") == "required":
    import triton  # noqa: F401  (CI: a missing Triton is a failure, not a skip)
else:
    pytest.importorskip("triton")

import kernels  # noqa: E402
import weft  # noqa: E402
import weft.triton  # noqa: E402

caps = pytest.mark.parametrize("capability", kernels.CAPABILITIES)


@caps
def test_size_argument_decides_the_loop(capability):
    compiled = kernels.compile_row_sum(capability)
    # Without the argument, the loop around the barriers depends on n_cols (PTX param 2):
    # weft explores its trip counts and says which values of n_cols the verdict covers.
    report = weft.triton.verify(compiled)
    assert report.verdict == "verified", report.text
    assert report.coverage is not None and not report.coverage["complete"], report.coverage
    assert report.coverage["inputs"]["term"].startswith("param 2"), report.coverage
    assert report.coverage["inputs"]["verified"][0][0] == 0, report.coverage
    assert "coverage: bounded" in report.text
    assert report.cta_shape == (compiled.metadata.num_warps * 32, 1, 1)
    # With it (by position, as the kernel is called, or by name), every barrier is known.
    for args in ([None, None, 1000], {"n_cols": 1000}, [None, None, 1000, 256]):
        report = weft.triton.verify(compiled, args)
        assert report.verdict == "verified", report.text
        assert report.params == ["2=1000"]
        assert report.coverage is None  # a fixed size is not explored
        assert report.stats.dynamic_barriers > 0


@caps
def test_replicated_row_sums_are_benign_races(capability):
    # tl.sum(x, axis=1): both warps of a row store its sum, computed from unknown data, to
    # one shared word. weft's second run names the values (value terms) and finds them
    # equal: benign races, a warning; under strict they count.
    compiled = kernels.compile_tile_row_sums(capability)
    report = weft.triton.verify(compiled)
    assert report.verdict == "verified", report.text
    assert report.violations and all(v.benign for v in report.violations), report.text
    assert any("compared symbolically" in n for n in report.notes), report.notes
    strict = weft.triton.verify(compiled, strict=True)
    assert strict.verdict == "violation", strict.text


@caps
def test_pipelined_matmul_with_its_sizes(capability):
    compiled = kernels.compile_matmul(capability)
    # Without the sizes the k loop's trip counts (K, param 5) are explored: bounded.
    report = weft.triton.verify(compiled)
    assert report.verdict == "verified", report.text
    assert report.coverage["inputs"]["term"].startswith("param 5"), report.coverage
    assert not report.coverage["complete"]
    report = weft.triton.verify(compiled, [None, None, None, 128, 128, 256, 256, 128, 128])
    assert report.verdict == "verified", report.text
    assert report.params == ["3=128", "4=128", "5=256", "6=256", "7=128", "8=128"]


@caps
def test_warp_specialized_matmul(capability):
    compiled = kernels.compile_matmul_ws(capability)
    # Triton's warp specialization adds partitions: more warps than the 4 requested.
    assert compiled.metadata.num_warps > 4
    # Host tensor descriptors take 5 PTX parameters each; M, N, K are 15, 16, 17.
    pmap = weft.triton.param_map(compiled)
    assert [(name, index) for name, _, index in pmap if name in ("M", "N", "K")] == [("M", 15), ("N", 16), ("K", 17)]
    assert pmap[0] == ("a_desc.descriptor", "nvTmaDesc", 0)
    report = weft.triton.verify(compiled)
    assert report.cta_shape == (compiled.metadata.num_warps * 32, 1, 1)
    # The k loop's trip count is K: without it weft explores it and says for which K.
    assert report.verdict != "violation", report.text
    assert report.coverage["inputs"]["term"].startswith("param 17"), report.coverage
    report = weft.triton.verify(compiled, [None, None, None, 128, 128, 256])
    assert report.params == ["15=128", "16=128", "17=256"]
    assert report.coverage is None
    # A tensor descriptor's shape and strides fill its own parameters.
    desc = SimpleNamespace(shape=[128, 256], strides=[256, 1])
    report = weft.triton.verify(compiled, [desc, None, None, 128, 128, 256])
    assert report.params[:4] == ["1=128", "2=256", "3=256", "4=1"]


@caps
def test_warp_specialized_matmul_is_not_a_violation(capability):
    # The partitions store the same constant to one shared word with no barrier between them
    # (Triton's dispatch): a benign race, a warning, unless strict.
    compiled = kernels.compile_matmul_ws(capability)
    report = weft.triton.verify(compiled, [None, None, None, 128, 128, 256])
    assert report.verdict != "violation", report.text
    assert all(v.benign for v in report.violations)


@caps
def test_named_barrier_with_half_the_cta_is_a_violation(capability):
    report = weft.triton.verify(kernels.compile_named_barrier(capability, 64))
    assert report.verdict == "violation"
    assert {v.kind for v in report.violations} == {"unsafe-recycling"}
    assert all(v.barrier == 1 for v in report.violations)
    # The diagnostic points at the inline asm in the Python source.
    assert any(loc.file.endswith("kernels.py") for v in report.violations for loc in v.locations)
    assert "tl.inline_asm_elementwise" in report.text
    with pytest.raises(weft.VerificationError, match=r"error\[unsafe-recycling\]"):
        report.raise_for_violations()


@caps
def test_named_barrier_with_the_whole_cta_is_verified(capability):
    report = weft.triton.verify(kernels.compile_named_barrier(capability, 128))
    assert report.verdict == "verified", report.text


def test_hand_edited_ptx_loses_its_barriers():
    ptx = kernels.compile_matmul(90).asm["ptx"]
    [report] = weft.verify(ptx, params={5: 256})
    assert report.verdict == "verified", report.text
    edited = "\n".join(line for line in ptx.splitlines() if "bar.sync" not in line)
    [report] = weft.verify(edited, params={5: 256})
    assert report.verdict == "violation"
    assert "race" in {v.kind for v in report.violations}


def test_args_that_do_not_fit_raise():
    compiled = kernels.compile_row_sum(90)
    with pytest.raises(TypeError, match="no argument"):
        weft.triton.verify(compiled, {"rows": 3})
    with pytest.raises(TypeError, match="takes 4 arguments"):
        weft.triton.verify(compiled, [None] * 5)
    with pytest.raises(TypeError, match="compiled Triton kernel"):
        weft.triton.verify(object())


def test_a_signature_that_disagrees_with_the_ptx_is_refused():
    # If Triton laid parameters out differently from what weft expects, binding a value to
    # the wrong PTX parameter could make a verdict false: weft refuses instead.
    compiled = kernels.compile_row_sum(90)
    fake_src = SimpleNamespace(signature={"out_ptr": "*fp32", "n_cols": "i64", "in_ptr": "*fp32"}, fn=None)
    fake = SimpleNamespace(asm=compiled.asm, metadata=compiled.metadata, name=compiled.name, src=fake_src)
    with pytest.raises(ValueError, match="maps to PTX parameter 1"):
        weft.triton.verify(fake, [None, 1000, None])


@pytest.fixture
def hook():
    from triton import knobs

    before = knobs.compilation.listener
    yield
    weft.triton.disable()
    assert knobs.compilation.listener is before


def test_hook_raises_on_a_violation_and_caches_per_hash(hook):
    weft.triton.enable()
    with pytest.raises(weft.VerificationError, match=r"error\[unsafe-recycling\]"):
        kernels.compile_named_barrier(90, 64)
    good = kernels.compile_named_barrier(90, 128)  # no exception
    report = weft.triton.cached_report(good.hash)
    assert report is not None and report.verdict == "verified"
    kernels.compile_named_barrier(90, 128)  # Triton's cache hit: weft's cached verdict
    assert weft.triton.cached_report(good.hash) is report


def test_hook_warns_in_warn_mode(hook):
    weft.triton.enable(mode="warn", unverifiable="ignore")
    with pytest.warns(weft.triton.TritonVerificationWarning, match="unsafe-recycling"):
        kernels.compile_named_barrier(100, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels.compile_row_sum_loaded(100)  # unverifiable: ignored


def test_hook_warns_on_unverifiable_kernels_by_default(hook):
    weft.triton.enable()
    # A loop bound read from global memory by a volatile load: no launch argument can fix it.
    with pytest.warns(weft.triton.UnverifiedWarning, match="global-memory load"):
        kernels.compile_row_sum_loaded(90)


def test_hook_chains_the_previous_listener(hook):
    from triton import knobs

    seen = []
    knobs.compilation.listener = lambda **kw: seen.append(kw["metadata"]["name"])
    try:
        weft.triton.enable(unverifiable="ignore")
        kernels.compile_named_barrier(90, 128)
        assert seen == ["named_barrier_kernel"]
        weft.triton.disable()
        assert knobs.compilation.listener is not None and knobs.compilation.listener is not weft.triton._installed
    finally:
        knobs.compilation.listener = None


def test_a_test_suite_with_the_hook_fails_on_the_buggy_kernel_only(tmp_path):
    # hook_demo/ is what a Triton project's tests look like with `weft.triton.enable()` in
    # their conftest.py: run it as its own pytest session.
    demo = Path(__file__).parent / "hook_demo"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(demo), "-p", "no:cacheprovider", "--confcutdir", str(demo),
         "-W", "ignore::weft.triton.UnverifiedWarning", "-q"],
        capture_output=True, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"), cwd=tmp_path,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "2 failed, 6 passed" in out, out
    failed = [line.split(" - ")[0] for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 2, out
    assert all("test_named_barrier_half_the_cta" in f for f in failed), out
    assert "error[unsafe-recycling]" in out
    assert "VerificationError" in out


def test_a_cta_shape_that_disagrees_with_reqntid_is_refused():
    compiled = kernels.compile_row_sum(90)
    metadata = compiled.metadata._replace(num_warps=8)
    fake = SimpleNamespace(asm=compiled.asm, metadata=metadata, name=compiled.name, src=compiled.src)
    with pytest.raises(ValueError, match="reqntid 128"):
        weft.triton.verify(fake)


def test_hook_on_ptx_weft_cannot_read_warns_and_does_not_fail_the_compile(hook, tmp_path):
    weft.triton.enable()
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n.target sm_90\n.entry k(\n{\n  bar.sync 0\n  ret;\n}\n")
    metadata = {"hash": "not-a-real-hash", "name": "k", "num_warps": 4, "warp_size": 32}
    from triton import knobs

    with pytest.warns(weft.triton.UnverifiedWarning, match="could not verify"):
        knobs.compilation.listener(src=None, metadata=metadata, metadata_group={"k.ptx": str(ptx)},
                                   times=None, cache_hit=False)
    assert weft.triton.cached_report("not-a-real-hash") is None
    weft.triton.enable(unverifiable="raise")
    with pytest.raises(weft.InputError):
        knobs.compilation.listener(src=None, metadata=metadata, metadata_group={"k.ptx": str(ptx)},
                                   times=None, cache_hit=True)
