"""Blame's ``aten-trace`` control on a GPU (``tests/unit/test_blame_aten_trace.py`` on CPU):
the dropout program's departure stays its Python decomposition's (the control runs and
agrees), and the thirtieth audit's dropped ``requires_grad_()`` is blamed as on CPU (on
torch 2.11, the H200's, tracing keeps it and the control is not reached). Skipped
without CUDA."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.oracle.blame import blame_program
from tests.unit.test_blame_aten_trace import ROOT, _program, check_dropped_requires_grad

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")


def test_a_dropped_requires_grad_is_blamed_on_tracing_to_aten_on_cuda():
    check_dropped_requires_grad("inductor", "cuda")  # torch 2.11 (the H200's): not reached


def test_a_python_decompositions_departure_stays_the_decompositions_on_cuda():
    program = _program(ROOT / "corpus" / "miscompile-decomposition-a649b9362b" / "program.json")
    b = blame_program(program, "aot_eager", "miscompile", "inputs", device="cuda")
    assert b.stages == ("decomposition",), b.trail
