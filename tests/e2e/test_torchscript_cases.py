"""The TorchScript seed cases of ``shared/cases`` are judged as their ``expect`` blocks say."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from aliasfuzz.fuzz.casefile import import_case
from aliasfuzz.oracle.ts_invariants import judge_torchscript_case

CASES = Path(
    os.environ.get("ALIASFUZZ_CASES", Path(__file__).resolve().parents[3] / "shared" / "cases")
)
TS_CASES = sorted(CASES.glob("b*_script_*.py")) if CASES.is_dir() else []


def _load(path: Path):
    return import_case(path)


def _expected(module) -> str:
    m = re.search(r"^\s*torchscript:\s*([\w-]+)", module.__doc__ or "", re.MULTILINE)
    assert m, "case has no torchscript line in its expect block"
    return m.group(1)


@pytest.mark.skipif(not TS_CASES, reason=f"no TorchScript cases under {CASES}")
@pytest.mark.parametrize("path", TS_CASES, ids=lambda p: p.stem)
def test_case_judged_as_expected(path):
    module = _load(path)
    verdict, why = judge_torchscript_case(module)
    assert verdict == _expected(module), why


def test_the_two_seed_cases_are_present():
    if not CASES.is_dir():
        pytest.skip(f"{CASES} not present")
    assert {p.stem[:3] for p in TS_CASES} >= {"b23", "b25"}


def test_b25_is_fine_under_the_profiling_executor():
    # The case's text: "The default profiling executor is fine" -- only legacy miscompiles.
    path = CASES / "b25_script_copy_into_input_requires_grad.py"
    if not path.exists():
        pytest.skip(f"{path} not present")
    module = _load(path)
    assert judge_torchscript_case(module, {"profiling_executor": True}) == ("ok", "")
    verdict, why = judge_torchscript_case(module)
    assert verdict == "miscompile" and "requires_grad eager False, torchscript True" in why


def test_b23_is_correct_without_optimization():
    # The case's text: "With optimisations off it is correct" (the simple executor).
    path = CASES / "b23_script_rotating_buffers.py"
    if not path.exists():
        pytest.skip(f"{path} not present")
    module = _load(path)
    assert judge_torchscript_case(module, {"optimize": False}) == ("ok", "")
    verdict, why = judge_torchscript_case(module)
    assert verdict == "miscompile" and "values differ" in why
