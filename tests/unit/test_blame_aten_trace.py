"""Blame names ``aten-trace`` when a ``decomposition`` departure needs no decomposition
(thirtieth audit, cda8407184): a view taken before ``requires_grad_()`` is
``requires_grad=True`` in eager and ``False`` compiled because ``make_fx`` records no
``requires_grad_``, with Inductor's decomposition table or without any (torch 2.13; torch
2.11 keeps it until Inductor's lowering). A departure a
Python decomposition makes (corpus miscompile-decomposition-a649b9362b: ``F.dropout`` in
eval mode, whose Python decomposition clones where ATen returns its input) keeps
``decomposition``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.blame import ATEN_TRACE, Blame, aten_trace_control, blame_program

ROOT = Path(__file__).resolve().parents[2]


def _program(path: Path) -> Program:
    return Program.from_json(json.loads(path.read_text()))


def traces_away_requires_grad() -> bool:
    """Whether this torch's ``make_fx`` drops the program's ``requires_grad_()``: torch 2.13
    does (the audit's finding); on torch 2.11 (the H200's) tracing and AOTAutograd keep it
    and only Inductor's lowering loses it, so the control is never reached there."""
    from torch.torch_version import TorchVersion

    return TorchVersion(torch.__version__) >= "2.13"


def check_dropped_requires_grad(pipeline: str, device: str) -> None:
    """The audit's program blamed on ``pipeline``: ``aten-trace`` where tracing drops the
    ``requires_grad_()``; elsewhere the decomposition cut agrees and the control says
    nothing (shared with ``tests/gpu/test_blame_aten_trace_cuda.py``)."""
    program = _program(ROOT / "tests" / "data" / "blame" / "aten_trace_cda8407184.json")
    b = blame_program(program, pipeline, "miscompile", "requires_grad", device=device)
    said = dict(b.trail)
    if not traces_away_requires_grad():
        assert said["decomposition"] == "agrees", said
        assert ATEN_TRACE not in said and ATEN_TRACE not in b.stages, said
        return
    assert b.stages == (ATEN_TRACE,), b.trail
    assert said["decomposition"].startswith("departs (requires_grad:"), said
    assert said[ATEN_TRACE].startswith(
        "no decomposition table, Python dispatcher off: departs (requires_grad:"), said


@pytest.mark.parametrize("pipeline", ["inductor", "aot_eager"])
def test_a_dropped_requires_grad_is_blamed_on_tracing_to_aten(pipeline):
    check_dropped_requires_grad(pipeline, "cpu")


def test_a_python_decompositions_departure_stays_the_decompositions():
    program = _program(ROOT / "corpus" / "miscompile-decomposition-a649b9362b" / "program.json")
    b = blame_program(program, "aot_eager", "miscompile", "inputs")
    assert b.stages == ("decomposition",), b.trail
    assert dict(b.trail)[ATEN_TRACE] == (
        "no decomposition table, Python dispatcher off: agrees; blame stands")


def test_only_a_blame_on_decomposition_alone_is_checked():
    def never():
        raise AssertionError("the control ran")

    for b in (Blame("functionalization", ("functionalization",), []),
              Blame("decomposition", ("decomposition", "lowering"), []),
              Blame(None, (), [], "no cut")):
        assert aten_trace_control(b, "inductor", "miscompile", "values", EagerResult(), never,
                                  []) is b
    only = Blame("decomposition", ("decomposition",), [])
    assert aten_trace_control(only, "fx-reinplace", "miscompile", "values", EagerResult(),
                              never, []) is only
