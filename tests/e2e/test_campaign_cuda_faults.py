"""A poisoned CUDA context (illegal address, device-side assert) is a ``crash`` verdict and
a worker restart, and the campaign goes on (``aliasfuzz/campaign/worker.py``).

Without a GPU the debug pipeline ``debug-cuda-fault`` simulates the sticky error inside the
worker; with one (``gpu`` marker) it triggers a real device-side assert.
"""

from __future__ import annotations

import json

import pytest

from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec


@pytest.fixture(autouse=True)
def _debug_pipelines(monkeypatch):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")


def _program(inplace: bool) -> Program:
    op = Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",)) if inplace else Op(
        "clone", ("v0",), {}, ("v1",)
    )
    return Program(
        (StorageSpec("s0", 4),),
        (TensorSpec("x", "s0", (4,), (1,)),),
        (Op("sin", ("x",), {}, ("v0",)), op),
        ("v1",),
    )


def _run_pair(tmp_path, device: str) -> tuple[list[dict], Worker]:
    worker = Worker(tmp_path / "w", timeout=120, recycle=100, device=device)
    try:
        outs = [
            worker.run({"program": _program(p).to_json(), "pipeline": "debug-cuda-fault",
                        "device": device})
            for p in (True, False, True, False)
        ]
    finally:
        worker.close()
    return outs, worker


def _check_pair(outs: list[dict], worker: Worker) -> None:
    assert [(o["verdict"], o["check"]) for o in outs] == [
        ("crash", "cuda-error"), ("ok", None), ("crash", "cuda-error"), ("ok", None)
    ], outs
    assert "worker restarted" in outs[0]["explanation"]
    assert "restart" not in outs[0]  # protocol detail, not part of the outcome
    # a fresh child after each fault: 1 at the start + 2 restarts
    assert worker.started == 3


def test_a_poisoned_context_is_a_crash_and_the_next_task_gets_a_fresh_worker(tmp_path):
    outs, worker = _run_pair(tmp_path, "cpu")
    _check_pair(outs, worker)


def test_a_campaign_with_cuda_faults_records_them_and_goes_on(tmp_path):
    opts = CampaignOptions(
        corpus=str(tmp_path / "corpus"), state=str(tmp_path / "state"), report="none",
        workers=1, shrink=False, programs=6, pipelines=("debug-cuda-fault",), seed=2,
    )
    res = run_campaign(opts, show=False)
    assert res.status == "done" and res.programs == 6
    lines = (res.dir / "journal.jsonl").read_text().splitlines()
    tasks = [e for e in map(json.loads, lines) if e["t"] == "task"]
    assert len(tasks) == 6
    for t in tasks:
        want = ("crash", "cuda-error") if "inplace" in t["op_kinds"] else ("ok", None)
        assert (t["outcome"]["verdict"], t["outcome"]["check"]) == want, t
    assert {t["outcome"]["verdict"] for t in tasks} == {"crash", "ok"}


@pytest.mark.gpu
def test_a_real_device_side_assert_restarts_the_worker(tmp_path):
    outs, worker = _run_pair(tmp_path, "cuda")
    _check_pair(outs, worker)
    assert "AcceleratorError" in outs[0]["explanation"] or "CUDA" in outs[0]["explanation"]
