"""Where the seed cases (``shared/cases``) are, for every suite that judges or twins them.

The cases live in the ``shared/`` folder beside the checkout (``ALIASFUZZ_CASES``
overrides, e.g. on the GPU machine where only the checkout travels). Without them the
case tests skip locally; under CI (``CI`` set) their absence is an error, so that CI can
never pass by silently skipping the cases.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CASES", "case_paths", "cpu_case_paths"]

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(os.environ.get("ALIASFUZZ_CASES", ROOT.parent / "shared" / "cases"))

if os.environ.get("CI") and not CASES.is_dir():
    raise RuntimeError(f"CI run without the seed cases: {CASES} does not exist")


def case_paths() -> list[Path]:
    """Every case file, sorted by name (empty when the folder is absent)."""
    return sorted(CASES.glob("b*.py")) if CASES.is_dir() else []


def cpu_case_paths() -> list[Path]:
    """The case files whose header says ``device: cpu``."""
    return [p for p in case_paths() if "\ndevice: cpu" in p.read_text()]
