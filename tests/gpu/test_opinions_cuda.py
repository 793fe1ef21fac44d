"""The other-device opinion on a GPU host: ``torch._foreach_add_`` on a list holding one CUDA
tensor twice (built by hand: validation's ``overlapping-writes`` rule would reject the
program) adds once on CUDA's fast path and twice on CPU, entry by entry, so a finding on it
is ``invalid-program`` / ``undefined-eager``, caught by the CPU opinion only (CUDA's
deterministic mode leaves the foreach kernel as it is). Skipped without CUDA.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.oracle.judge import judge
from aliasfuzz.passes.execution import Execution

pytestmark = pytest.mark.gpu


def _foreach_twice(v):
    torch._foreach_add_([v, v], 0.5)
    return v.clone()


def _inputs():
    return (torch.zeros(1024, device="cuda"),)


def test_foreach_on_one_tensor_twice_is_undefined_eager_by_the_cpu_opinion():
    eager = _foreach_twice(*_inputs())
    assert not torch.equal(eager.cpu(), _foreach_twice(torch.zeros(1024)))  # the premise
    ins = _inputs()
    # a pipeline run that disagrees with eager, so that the verdict before the review is a
    # finding (every finding is reviewed)
    wrong = Execution("aot_eager", "cuda", outputs=(eager + 100,), inputs_after=ins,
                      aliases={"out0": ()})
    j = judge(_foreach_twice, wrong, device="cuda", inputs=_inputs)
    assert (j.verdict.value, j.check) == ("invalid-program", "undefined-eager"), j.explanation
    status = {(o.name, o.device): o.status for o in j.opinions}
    assert status[("other-device", "cpu")] == "disagree"
    assert "eager on cpu" in j.explanation.split("; ")[0]


def test_a_device_independent_finding_is_kept_on_cuda():
    def f(x):
        return x * 3

    ins = _inputs()
    wrong = Execution("aot_eager", "cuda", outputs=(ins[0] * 3 + 1,), inputs_after=ins,
                      aliases={"out0": ()})
    j = judge(f, wrong, device="cuda", inputs=_inputs)
    assert (j.verdict.value, j.check) == ("miscompile", "values")
    assert {o.name: o.status for o in j.opinions} == {"deterministic": "agree", "other-device": "agree"}
