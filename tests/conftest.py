"""Shared pytest configuration: Hypothesis profiles and the ``gpu`` marker.

Hypothesis profiles (select with ``HYPOTHESIS_PROFILE``; default ``ci`` when ``CI`` is
set to a true value, else ``dev``):

* ``ci``: derandomized (the same examples on every run), bounded examples, no deadline,
  no example database: CI runs are reproducible and bounded in time.
* ``dev``: Hypothesis's randomness and database, no deadline (compilation is slow).
* ``nightly``: many examples, for long explorations.

Tests marked ``gpu`` are skipped when no CUDA device is present.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# Generating and compiling programs is slow by nature; speed is measured by bench/, not here.
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=50,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_OK,
)
settings.register_profile(
    "dev", max_examples=100, deadline=None, print_blob=True, suppress_health_check=_SLOW_OK
)
settings.register_profile(
    "nightly", max_examples=2000, deadline=None, print_blob=True, suppress_health_check=_SLOW_OK
)


def _profile() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    ci = os.environ.get("CI", "").strip().lower()
    return "ci" if ci not in ("", "0", "false", "no") else "dev"


settings.load_profile(_profile())


def pytest_report_header(config) -> str:
    return f"hypothesis profile: {settings.get_current_profile_name()}"


def pytest_collection_modifyitems(config, items) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in gpu_items:
        item.add_marker(skip)
