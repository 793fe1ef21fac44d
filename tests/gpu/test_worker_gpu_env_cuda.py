"""A CUDA campaign's worker children on a real GPU host (issue 16, "every GPU busy"): each
child runs with the ``CUDA_VISIBLE_DEVICES`` entry :func:`aliasfuzz.campaign.gpus.worker_gpu`
gives it and ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (NVML's order), read from the running child's
own environment (``/proc/PID/environ``), and judges a generated program on that GPU.
``tests/unit/test_gpus.py`` checks the same with faked children and a faked GPU count;
this is the check on the hardware. Skipped without CUDA.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aliasfuzz.campaign import pool as pool_mod
from aliasfuzz.campaign.driver import program_at
from aliasfuzz.campaign.options import CampaignOptions

pytestmark = pytest.mark.gpu


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(e.decode(errors="replace").split("=", 1) for e in raw if b"=" in e)


def test_each_cuda_worker_child_runs_on_its_gpu_in_pci_order(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    import torch

    n = torch.cuda.device_count()
    workers = 2 * n  # two per GPU: the round robin wraps
    pool = pool_mod.Pool(CampaignOptions(programs=1, workers=workers, device="cuda"),
                         tmp_path / "w")
    try:
        assert pool.gpus == [str(i) for i in range(n)]
        assert pool.workers_per_gpu() == [2] * n
        program = program_at(0, 0)
        for k, w in enumerate(pool.workers):
            out = w.run(pool._task(program, "aot_eager"))
            assert "internal_error" not in out and out.get("verdict"), out
            env = _environ(w.proc.pid)
            assert env["CUDA_VISIBLE_DEVICES"] == str(k % n), (k, env.get("CUDA_VISIBLE_DEVICES"))
            assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
            assert env["TORCHINDUCTOR_COMPILE_THREADS"] == "1"  # several workers: one each
            assert os.getpid() != w.proc.pid
    finally:
        pool.close()
