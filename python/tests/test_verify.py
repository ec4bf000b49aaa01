"""weft.verify on the repository's samples: the same verdicts as the binary, report objects
with the JSON schema's fields, and the errors a caller can make."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import weft

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = json.loads((ROOT / "samples" / "manifest.json").read_text())["samples"]


def read(rel: str) -> str:
    return (ROOT / rel).read_text()


def kwargs_of(args: list[str]) -> dict:
    """The keyword arguments of weft.verify that mean what a manifest entry's flags mean."""
    kw: dict = {}
    it = iter(args)
    for flag in it:
        if flag == "--threads":
            kw["threads"] = [int(d) for d in next(it).split("x")]
        elif flag == "--param":
            kw.setdefault("params", []).append(next(it))
        elif flag == "--warp-sync":
            kw["warp_sync"] = True
        elif flag == "--no-initializers":
            kw["initializers"] = False
        elif flag == "--strict":
            kw["strict"] = True
        elif flag == "--max-trips":
            kw["max_trips"] = int(next(it))
        else:
            raise AssertionError(f"the test does not know the flag {flag}")
    return kw


@pytest.mark.parametrize("sample", SAMPLES, ids=[s["name"] for s in SAMPLES])
def test_manifest_sample(sample, monkeypatch):
    # .file names in the samples are relative to the repository root, as for the binary.
    monkeypatch.chdir(ROOT)
    reports = weft.verify(read(sample["ptx"]), kernel=sample["kernel"], filename=sample["ptx"],
                          **kwargs_of(sample["args"]))
    if sample["kernel"] is not None:
        assert [r.kernel for r in reports] == [sample["kernel"]]
    assert reports
    for r in reports:
        check(r, sample)


def check(r: weft.KernelReport, sample: dict) -> None:
    expect = sample["expect"]
    assert r.verdict == expect["verdict"], r.text
    assert {v.kind for v in r.violations} == set(expect["kinds"])
    if "assumptions" in expect:
        assert len(r.assumptions) == expect["assumptions"]
    for want in expect.get("notes_contain", []):
        assert any(want in n for n in r.notes) or any(want in (a.message or "") for a in r.assumptions)
    for want in expect.get("messages_contain", []):
        assert any(want in v.message for v in r.violations) or any(want in u.reason for u in r.unverifiable)
    if "threads" in expect:
        assert [[t.first, t.last] for t in r.violations[0].threads] == expect["threads"]
    if "induction" in expect:
        assert r.coverage["induction"]["concluded"] == expect["induction"], r.coverage
    # The verdict is consistent with the findings, and the text ends with the summary line.
    errors = [v for v in r.violations if r.strict or not v.benign]
    assert (r.verdict == "violation") == bool(errors)
    assert (r.verdict == "unverifiable") == (not errors and bool(r.unverifiable))
    assert f"kernel {r.kernel} in {sample['ptx']}: " in r.text


def test_race_report_has_the_schema_fields(monkeypatch):
    monkeypatch.chdir(ROOT)
    [r] = weft.verify(read("samples/classic/missing_barrier.ptx"), filename="samples/classic/missing_barrier.ptx")
    assert r.verdict == "violation" and not r.verified
    assert r.cta_shape == (128, 1, 1)  # .maxntid
    assert r.warp_sync is False and r.params == []
    [v] = r.violations
    assert v.kind == "race"
    assert len(v.locations) == 2
    read_, write = sorted(v.locations, key=lambda loc: -loc.line)
    assert (write.file, write.line) == ("samples/classic/missing_barrier.cu", 10)
    assert (read_.file, read_.line) == ("samples/classic/missing_barrier.cu", 12)
    assert write.ptx_file == "samples/classic/missing_barrier.ptx" and write.ptx_line > 0
    assert write.opcode.startswith("st.shared") and "write" in write.label
    assert str(write) == f"samples/classic/missing_barrier.cu:10:{write.column}"
    assert v.threads and all(isinstance(t, weft.ThreadRange) for t in v.threads)
    assert v.threads_text.startswith("warp 0")
    assert v.notes and "not ordered by any barrier" in v.notes[0]
    assert r.stats.threads == 128 and r.stats.commands > 0 and r.stats.race_tests > 0
    # The text rendering is the binary's: source lines from the .cu file.
    assert "error[race]" in r.text
    assert "// BUG: __syncthreads() missing here" in r.text


def test_raise_for_violations_carries_the_text():
    [r] = weft.verify(read("samples/classic/missing_barrier.ptx"))
    with pytest.raises(weft.VerificationError) as info:
        r.raise_for_violations()
    assert info.value.report is r
    assert str(info.value) == r.text.rstrip("\n")
    assert "error[race]" in str(info.value)
    assert isinstance(info.value, AssertionError)  # a failed check in any test runner


def test_unverifiable_names_the_input_and_params_fix_it():
    [r] = weft.verify(read("samples/params/float_exp_loop.ptx"), threads=128)
    assert r.verdict == "unverifiable"
    r.raise_for_violations()  # not a violation: no exception
    with pytest.raises(weft.VerificationError):
        r.raise_unless_verified()
    [u] = r.unverifiable
    assert any("parameter 1" in i for i in u.inputs)
    assert u.register is not None and u.location is not None
    assert u.hint is not None and "1=VALUE" in u.hint
    assert "warning[unverifiable]" in r.text
    # A loop bounded by an integer parameter is explored (a bounded verdict)...
    ptx = read("samples/params/param_loop.ptx")
    [r] = weft.verify(ptx, threads=128)
    assert r.verdict == "verified", r.text
    assert r.coverage is not None and not r.coverage["complete"]
    assert "coverage: bounded" in r.text
    # ... and the same parameter fixed by index, by PTX name, and as a --param spec.
    for params in ({1: 4}, {"_Z10param_loopPKfiPf_param_1": 4}, ["1=4"]):
        [r] = weft.verify(ptx, threads=128, params=params)
        assert r.verdict == "verified", r.text
        r.raise_unless_verified()
        assert len(r.params) == 1
        assert r.coverage is None


def test_threads_shapes_and_kernel_selection():
    ptx = read("samples/deadlock/two_warp_cycle.ptx")
    [r] = weft.verify(ptx, threads=(64, 1))
    assert r.cta_shape == (64, 1, 1)
    assert [v.kind for v in r.violations] == ["deadlock"]
    assert r.violations[0].barrier in (1, 2) and r.violations[0].generation == 1
    [r] = weft.verify(ptx, threads=64, kernel="two_warp_cycle")  # the unmangled identifier
    assert r.kernel == "_Z14two_warp_cyclePf"
    with pytest.raises(ValueError, match="no kernel named `nothing`"):
        weft.verify(ptx, threads=64, kernel="nothing")


def test_no_cta_shape_is_unverifiable_with_a_hint():
    # A kernel without .reqntid/.maxntid and no threads argument.
    ptx = read("samples/deadlock/two_warp_cycle.ptx").replace(".maxntid 64, 1, 1", "")
    assert ".reqntid" not in ptx and ".maxntid" not in ptx
    [r] = weft.verify(ptx)
    assert r.verdict == "unverifiable" and r.cta_shape is None
    assert "--threads" in (r.unverifiable[0].hint or "")


def test_bad_arguments_raise():
    ptx = read("samples/params/param_loop.ptx")
    with pytest.raises(ValueError, match="names no parameter"):
        weft.verify(ptx, threads=128, params={7: 1})
    with pytest.raises(ValueError, match="not a number"):
        weft.verify(ptx, threads=128, params=["1=four"])
    with pytest.raises(ValueError, match="does not fit"):
        weft.verify(ptx, threads=128, params={1: 2**40})
    with pytest.raises(TypeError):
        weft.verify(ptx, threads=128, params="1=4")
    with pytest.raises(ValueError):
        weft.verify(ptx, threads=(1, 2, 3, 4))
    with pytest.raises(ValueError):
        weft.verify(ptx, threads=-1)
    # CUDA's limits, checked by the library entry point for every caller.
    for shape in (2048, (32, 0), (32, 32, 2)):
        with pytest.raises(ValueError, match="CTA shape"):
            weft.verify(ptx, threads=shape)
    with pytest.raises(ValueError, match="outside the grid"):
        weft.verify(ptx, threads=128, cta=2, grid=2)
    with pytest.raises(ValueError, match="grid"):
        weft.verify(ptx, threads=128, grid=(1, 0))
    [r] = weft.verify(ptx, threads=128, cta=(3, 1), params={1: 4})  # grid 4x2x1
    assert r.verdict == "verified"


def test_malformed_ptx_is_an_input_error():
    with pytest.raises(weft.InputError) as info:
        weft.verify(".version 8.0\n.target sm_90\n.entry k(\n{\n  bar.sync 0\n  ret;\n}\n", filename="bad.ptx")
    assert info.value.errors and info.value.errors[0].startswith("bad.ptx:")
    assert info.value.reports == []
    assert isinstance(info.value, ValueError)


def test_budgets_make_a_kernel_unverifiable():
    ptx = read("samples/params/param_loop.ptx")
    [r] = weft.verify(ptx, threads=128, params={1: 4}, max_steps=3)
    assert r.verdict == "unverifiable", r.text
    assert "max-steps" in r.text
    [r] = weft.verify(ptx, threads=128, params={1: 4}, max_memory=1024)
    assert r.verdict == "unverifiable", r.text
    assert "max-memory" in r.text


def test_ptx_without_a_kernel_is_an_input_error():
    with pytest.raises(weft.InputError, match="no kernel"):
        weft.verify(".version 8.0\n.target sm_90\n.address_size 64\n")


def test_other_threads_run_while_weft_verifies():
    # The extension releases the GIL: verification in threads gives the same verdicts.
    from concurrent.futures import ThreadPoolExecutor

    ptx = read("samples/classic/missing_barrier.ptx")
    with ThreadPoolExecutor(4) as pool:
        verdicts = list(pool.map(lambda _: weft.verify(ptx)[0].verdict, range(8)))
    assert verdicts == ["violation"] * 8


def test_version_is_the_workspace_version():
    import re

    cargo = (ROOT / "Cargo.toml").read_text()
    assert weft.__version__ == re.search(r'(?m)^version = "([^"]+)"', cargo).group(1)
