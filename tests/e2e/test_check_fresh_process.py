"""``aliasfuzz check`` in a fresh process on every hand-written program, as a user runs it.

* Each mutant program of the zoo (``bench/mutants/programs``, case format, ``expect: ...
  ok``) passes without its plugin and is flagged with it (``--plugin bench/mutants/<m>.py``,
  as ``bench/mutants/README.md`` shows): exit 1 and the verdict the mutant's docstring names.
* Each shared case the CPU can run (``../shared/cases``, ``device: cpu``) is judged as its
  ``expect`` block says (exit 0, every line "as expected"); pairs the oracle cannot judge
  yet are strict xfails naming their issue (:data:`tests.common.cases.KNOWN_GAPS`).

A fresh process per command is the point (issue 17): in the test process a command would
pass on state an earlier test left behind (the CPU Triton layer switched on by another
test hid a ``check`` that failed for every user).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aliasfuzz.oracle.cases import parse_header
from tests.common.cases import cpu_case_paths, expected, gap_marks
from tests.common.cli import run_cli

ZOO = Path(__file__).resolve().parents[2] / "bench" / "mutants"

#: mutant -> the verdict it must cause on its program (its docstring's "Expected verdict").
EXPECTED = {
    "m1_view_readers": "miscompile",
    "m2_graph_input": "miscompile",
    "m3_no_overlap": "miscompile",
    "m4_two_users": "missed-reinplace",
    "m5_always_clone": "missed-reinplace",
    "m6_triton_readonly": "miscompile",
    "m7_fx_later_uses": "miscompile",
    "m8_ts_profile_left": "invariant",
    "m9_backward_reinplace": "miscompile",
}


def test_the_zoo_is_complete():
    assert sorted(p.stem for p in ZOO.glob("m*.py")) == sorted(EXPECTED)
    assert sorted(p.stem for p in (ZOO / "programs").glob("m*.py")) == sorted(EXPECTED)


def _for_this_host(program: Path, tmp_path: Path) -> Path:
    """``program``, or on a GPU host its CUDA twin when it launches a user Triton kernel:
    there the CPU Triton layer is off (``fuzz/triton_compat.py``) and Triton refuses CPU
    tensors, so the CPU program has no eager meaning (H200: ``invalid-program``)."""
    import torch

    text = program.read_text()
    if "import triton" not in text or not torch.cuda.is_available():
        return program
    twin = text.replace("device: cpu", "device: cuda").replace(
        "torch.arange(8.0)", 'torch.arange(8.0, device="cuda")')
    assert twin.count('device="cuda"') == 1, "the twin rewrite no longer matches the program"
    out = tmp_path / program.name
    out.write_text(twin)
    return out


@pytest.mark.parametrize("mutant", sorted(EXPECTED))
def test_check_flags_each_mutant_on_its_program(mutant, tmp_path):
    program = _for_this_host(ZOO / "programs" / f"{mutant}.py", tmp_path)
    expect, _, _ = parse_header(program.read_text())
    clean = run_cli("check", program)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    lines = clean.stdout.strip().splitlines()
    assert sorted(line.split(":")[0] for line in lines) == sorted(expect), lines
    assert all(" ok (as expected)" in line for line in lines), lines
    flagged = run_cli("check", "--plugin", ZOO / f"{mutant}.py", program)
    assert flagged.returncode == 1, flagged.stdout + flagged.stderr
    assert f": {EXPECTED[mutant]} (CONTRADICTS expect: ok)" in flagged.stdout, flagged.stdout


def _cpu_cases():
    out = []
    for path in cpu_case_paths():
        expect, _, _ = parse_header(path.read_text())
        out.append(pytest.param(path, id=path.stem, marks=gap_marks(path.stem, list(expect))))
    return out


@pytest.mark.parametrize("path", _cpu_cases())
def test_check_judges_each_cpu_case_as_expected(path):
    expect, _, _ = parse_header(path.read_text())
    r = run_cli("check", path)
    lines = r.stdout.strip().splitlines()
    assert sorted(line.split(":")[0] for line in lines) == sorted(expect), r.stdout + r.stderr
    contradicted = 0
    for line in lines:
        pipeline = line.split(":")[0]
        want = expected(path.stem, pipeline, expect)
        if want == expect[pipeline]:
            assert line.startswith(f"{pipeline}: {want} (as expected)"), r.stdout
        else:  # torch 2.11 has the bug the case's expect block says 2.13 fixed: check says so
            assert line.startswith(f"{pipeline}: {want} (CONTRADICTS expect: {expect[pipeline]})"), r.stdout
            contradicted += 1
    assert r.returncode == (1 if contradicted else 0), r.stdout + r.stderr


def test_every_cpu_case_is_checked():
    # the shared cases hold 14 CPU cases (b* and c*); losing some to a glob is a failure
    stems = [p.stem for p in cpu_case_paths()]
    if not stems:
        pytest.skip("no shared cases folder")
    assert len(stems) >= 14 and any(s.startswith("c") for s in stems), stems
