"""Every ../shared/cases file is judged exactly as its ``expect`` block says (CPU cases here).

One test per (case, pipeline), through the Python API in the test process (the CLI in a
fresh process: ``test_check_fresh_process.py``). Cuda cases are skipped without a GPU,
never passed; pairs the oracle cannot judge yet are strict xfails naming their issue
(:data:`tests.common.cases.KNOWN_GAPS`). The case folder is found by
:mod:`tests.common.cases` (``ALIASFUZZ_CASES`` overrides).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aliasfuzz.oracle.cases import judge_case, load_case, parse_header
from tests.common.cases import CASES, case_paths, expected, gap_marks


def _params():
    out = []
    for f in case_paths():
        expect, device, _ = parse_header(f.read_text())
        for pipeline in expect:
            marks = [pytest.mark.gpu] if device.startswith("cuda") else []
            marks += gap_marks(f.stem, [pipeline])
            out.append(pytest.param(f, pipeline, id=f"{f.stem}-{pipeline}", marks=marks))
    return out


@pytest.mark.parametrize(("path", "pipeline"), _params())
def test_case_judged_as_expected(path: Path, pipeline: str) -> None:
    case = load_case(path)
    if case.needs_gpu:
        import torch

        if not torch.cuda.is_available():
            pytest.skip("cuda case: needs a GPU")
    (row,) = judge_case(path, [pipeline])
    # the expect block describes torch 2.13; tests.common.cases.ON_TORCH_2_11 names the
    # pairs torch 2.11 judges otherwise (a real bug 2.13 fixed, with its upstream issue)
    want = expected(path.stem, pipeline, case.expect)
    assert row["verdict"] == want, f"{path.name} {pipeline}: {row['explanation']}\n{row.get('diff', '')}"


@pytest.mark.skipif(not CASES.is_dir(), reason=f"no case folder at {CASES}")
def test_every_cpu_case_has_a_judged_pipeline() -> None:
    cpu = [f for f in case_paths() if parse_header(f.read_text())[1] == "cpu"]
    assert len(cpu) >= 12
