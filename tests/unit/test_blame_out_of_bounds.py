"""Blame of a view past its storage is deterministic: full Inductor's stages (lowering,
scheduler) check the views their wrapper makes and stop there (OutOfBoundsView), as the
judge does, instead of hoping glibc notices the write in a heap-checked child. Programs:
corpus crash-lowering-5fcbc5cdc0 and fresh user 29's relayout of it (tests/data/blame, filed
by the glibc cut as crash-scheduler-c711f5d641: one bug split over two stages). The
thirtieth audit places the defect in Inductor's as_strided lowering, which rebases storage
offsets for graph inputs only; the stages before full Inductor compute eager's values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.blame import blame_program

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {
    "5fcbc5cdc0": ROOT / "corpus" / "crash-lowering-5fcbc5cdc0" / "program.json",
    "c711f5d641": ROOT / "tests" / "data" / "blame" / "oob_relayout_c711f5d641.json",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_an_out_of_bounds_finding_is_blamed_on_lowering_in_this_process(name):
    program = Program.from_json(json.loads(PROGRAMS[name].read_text()))
    error = ("inductor writes out of bounds: Inductor's wrapper made reinterpret_tensor(buf, "
             "...): out of bounds (checked as the wrapper made it; the call stopped there)")
    b = blame_program(program, "inductor", "crash", "out-of-bounds", error=error)
    assert b.stages == ("lowering",), b.trail
    said = dict(b.trail)
    for stage in ("dynamo", "functionalization", "aot", "reinplace"):
        assert said[stage] == "agrees", (stage, said[stage])
    # the compiled stages stop at the view their wrapper makes, and it is the finding's own
    # error (no child process was killed: the old cut's "killed its child process")
    for stage in ("lowering", "scheduler"):
        assert said[stage].startswith("departs (raises OutOfBoundsView"), said[stage]
        assert "the final pipeline's error differs" not in said[stage]
        assert "(2, 1), (" in said[stage] and "out of bounds" in said[stage]
