"""Blame's ``aten-trace`` control on a GPU (``tests/unit/test_blame_aten_trace.py`` on CPU):
the thirtieth audit's dropped ``requires_grad_()`` departs in plain ATen tracing on CUDA
too, and the dropout program's departure stays its Python decomposition's. Skipped
without CUDA."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.blame import ATEN_TRACE, blame_program

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")


def _program(path: Path) -> Program:
    return Program.from_json(json.loads(path.read_text()))


def test_a_dropped_requires_grad_is_blamed_on_tracing_to_aten_on_cuda():
    program = _program(ROOT / "tests" / "data" / "blame" / "aten_trace_cda8407184.json")
    b = blame_program(program, "inductor", "miscompile", "requires_grad", device="cuda")
    assert b.stages == (ATEN_TRACE,), b.trail


def test_a_python_decompositions_departure_stays_the_decompositions_on_cuda():
    program = _program(ROOT / "corpus" / "miscompile-decomposition-a649b9362b" / "program.json")
    b = blame_program(program, "aot_eager", "miscompile", "inputs", device="cuda")
    assert b.stages == ("decomposition",), b.trail
