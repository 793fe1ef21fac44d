"""Where the seed cases (``shared/cases``) are, for every suite that judges or twins them.

The cases live in the ``shared/`` folder beside the checkout (``ALIASFUZZ_CASES``
overrides, e.g. on the GPU machine where only the checkout travels). Without them the
case tests skip locally; under CI (``CI`` set) their absence is an error, so that CI can
never pass by silently skipping the cases.

:data:`KNOWN_GAPS` names the (case, pipeline) pairs the oracle cannot judge yet, each with
the issue that fixes it: tests mark them ``xfail(strict=True)`` (:func:`gap_marks`), never
skip them, so the day a gap closes the test says so.

A case's ``expect`` block says what torch 2.13 (CI) does; :data:`ON_TORCH_2_11` names the
(case, pipeline) pairs that torch 2.11 (the GPU machine) judges otherwise, each with the
upstream issue, and :func:`expected` gives the verdict a test must see on the torch under
test (the 2.11 one there, asserted, never skipped).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.common.torch_versions import on_torch_2_11

__all__ = ["CASES", "KNOWN_GAPS", "ON_TORCH_2_11", "case_paths", "cpu_case_paths", "expected",
           "gap_marks"]

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(os.environ.get("ALIASFUZZ_CASES", ROOT.parent / "shared" / "cases"))

if os.environ.get("CI") and not CASES.is_dir():
    raise RuntimeError(f"CI run without the seed cases: {CASES} does not exist")

#: (case stem, pipeline) -> why the oracle's verdict differs from the case's expect line.
KNOWN_GAPS: dict[tuple[str, str], str] = {}


#: (case stem, pipeline) -> (verdict on torch 2.11, the ``tests.common.torch_versions``
#: difference that explains it, naming the upstream issue).
ON_TORCH_2_11: dict[tuple[str, str], tuple[str, str]] = {
    ("b09_custom_ops_on_sibling_views", "inductor"): ("miscompile", "issue-153389"),
}


def expected(stem: str, pipeline: str, expect: dict[str, str]) -> str:
    """The verdict a test must see for ``pipeline`` of case ``stem`` on the torch under
    test: the case's ``expect`` line (torch 2.13), unless :data:`ON_TORCH_2_11` says torch
    2.11 judges it otherwise and this is torch 2.11."""
    if (stem, pipeline) in ON_TORCH_2_11:
        verdict, difference = ON_TORCH_2_11[(stem, pipeline)]
        if on_torch_2_11(difference):
            return verdict
    return expect[pipeline]


def case_paths() -> list[Path]:
    """Every case file (``*.py``), sorted by name (empty when the folder is absent)."""
    return sorted(CASES.glob("*.py")) if CASES.is_dir() else []


def cpu_case_paths() -> list[Path]:
    """The case files whose header says ``device: cpu``."""
    return [p for p in case_paths() if "\ndevice: cpu" in p.read_text()]


def gap_marks(stem: str, pipelines: list[str] | tuple[str, ...]) -> list[pytest.MarkDecorator]:
    """``[xfail(strict=True, reason=...)]`` when a known gap touches ``pipelines`` of case
    ``stem`` (the reasons of all of them), else ``[]``."""
    reasons = [KNOWN_GAPS[(stem, p)] for p in pipelines if (stem, p) in KNOWN_GAPS]
    if not reasons:
        return []
    return [pytest.mark.xfail(strict=True, reason="; ".join(dict.fromkeys(reasons)))]
