"""Every seed case (``shared/cases``) through every pipeline its ``expect`` block names.

This records observed behaviour (equal to eager or not, decisions, failures) in
``$ALIASFUZZ_CASE_LOG`` (JSON lines; default: pytest's tmp dir) and checks that each run
completed and was recorded; turning observations into verdicts is the oracle's job.
CUDA cases are skipped without a GPU; ``torchscript`` has its own adapter and tests
(``tests/e2e/test_torchscript_cases.py``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from aliasfuzz.passes import PIPELINES
from aliasfuzz.passes.cases import load_case, observe
from tests.common.cases import case_paths


def _params():
    out = []
    for path in case_paths():
        text = path.read_text()
        block = text.split("expect:", 1)[1].split("device:", 1)[0] if "expect:" in text else ""
        for line in block.splitlines():
            name = line.split(":", 1)[0].strip()
            if name:
                out.append(pytest.param(path, name, id=f"{path.stem}-{name}"))
    return out


@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    path = os.environ.get("ALIASFUZZ_CASE_LOG")
    return Path(path) if path else tmp_path_factory.mktemp("cases") / "observations.jsonl"


@pytest.mark.parametrize(("path", "pipeline"), _params())
def test_case_runs_and_is_recorded(path, pipeline, log_path):
    case = load_case(path)
    assert case.expect[pipeline]
    if case.device.startswith("cuda") and not torch.cuda.is_available():
        pytest.skip("CUDA case without a GPU")
    if pipeline not in PIPELINES:
        pytest.skip(f"{pipeline} is run by its own adapter's tests")
    obs = observe(case, pipeline)
    ex = obs.execution
    # completed: either a stage-tagged failure, or all three comparisons made
    if ex.failure is None and obs.eager_error is None:
        assert None not in (obs.outputs_equal, obs.inputs_equal, obs.aliases_equal)
        assert all(d.captured for d in ex.decisions), ex.decisions
    else:
        assert ex.failure is None or ex.failure.stage in ("trace", "compile", "run")
    if pipeline == "inductor" and ex.failure is None:
        assert ex.extra["pass_calls"] >= 1  # the pass ran: no cache hit, no eager fallback
    record = {**obs.summary(), "expect": case.expect[pipeline]}
    with open(log_path, "a") as f:
        f.write(json.dumps(record, default=str) + "\n")
    assert json.loads(log_path.read_text().splitlines()[-1])["case"] == case.name
