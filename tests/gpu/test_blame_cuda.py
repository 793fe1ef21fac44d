"""Blame on a GPU: the stages of full Inductor with its Triton codegen (issue 13).

Case b15 (a user Triton kernel launched with one tensor as both mutated arguments, PyTorch
#196657): functionalization loses one write, and on the H200 (torch 2.11) the reinplace
pass then erases the copy-back of the other argument (``shared/audit/README.md``, root
triton-copyback-wrong-arg: eager ``[1, 11, 2, 3]``, inductor ``[0, 10, 2, 3]``). Both
stages must be blamed, functionalization first, through the native launch and Inductor's
own codegen. Skipped without CUDA.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from aliasfuzz.campaign import _judge
from aliasfuzz.fuzz.ir import Program

pytestmark = pytest.mark.gpu

SEED = Path(__file__).resolve().parents[2] / "corpus" / "seeds"


def test_b15_on_cuda_is_blamed_on_functionalization_then_reinplace():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    p = Program.loads((SEED / "b15_triton_same_tensor_two_mutated_args.json").read_text())
    for pipeline in ("inductor", "inductor-reinplace"):
        out = _judge.evaluate(p, pipeline, "cuda")
        assert out["verdict"] == "miscompile", (pipeline, out["explanation"])
        b = _judge.blame(p, pipeline, "cuda", None, out)
        assert b["stages"][0] == "functionalization", (pipeline, b["trail"])
        assert "reinplace" in b["stages"], (pipeline, b["trail"])
    assert b["full"] == "reproduces"  # the fast path's finding, re-judged on full inductor
