"""Views past their storage on a GPU: Inductor's Python wrapper for Triton makes its views
with ``reinterpret_tensor`` as the C++ one does (``oracle/wrapper_bounds.py``). On CUDA no
glibc would ever notice the write (it lands in device memory), so the check is the only
witness. Corpus crash-lowering-5fcbc5cdc0 and fresh user 29's relayout of it run
on the GPU: the worker's judgement stops at the view (alone and from a shared capture),
and blame names lowering, whose wrapper makes it, as on CPU
(``tests/unit/test_blame_out_of_bounds.py``). Skipped without CUDA.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from aliasfuzz.campaign import _judge
from aliasfuzz.fuzz.ir import Program

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {
    "5fcbc5cdc0": ROOT / "corpus" / "crash-lowering-5fcbc5cdc0" / "program.json",
    "c711f5d641": ROOT / "tests" / "data" / "blame" / "oob_relayout_c711f5d641.json",
}


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_view_past_its_buffer_stops_the_call_on_cuda_and_blame_names_lowering(name):
    p = Program.from_json(json.loads(PROGRAMS[name].read_text()))
    out = _judge.evaluate(p, "inductor", "cuda")
    assert (out["verdict"], out["check"]) == ("crash", "out-of-bounds"), out["explanation"]
    assert out["out_of_bounds"] and "out of bounds" in out["out_of_bounds"][0]
    b = _judge.blame(p, "inductor", "cuda", None, out)
    assert list(b["stages"]) == ["lowering"], b["trail"]
    said = dict(map(tuple, b["trail"]))
    assert said["functionalization"] == "agrees", said
    assert said["lowering"].startswith("departs (raises OutOfBoundsView"), said
    grouped = _judge.evaluate_group(p, ["aot_eager", "inductor"], "cuda")
    assert (grouped["inductor"]["verdict"], grouped["inductor"]["check"]) == (
        "crash", "out-of-bounds"), grouped["inductor"]["explanation"]
    assert grouped["aot_eager"]["verdict"] == "ok", grouped["aot_eager"]["explanation"]
