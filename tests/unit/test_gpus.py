"""Every GPU busy (:mod:`aliasfuzz.campaign.gpus`): workers spread over the GPUs through
``CUDA_VISIBLE_DEVICES``, the default worker count, and the utilization sampler, all
without a GPU (the GPU count, the worker children and NVML are faked)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import types

import pytest

from aliasfuzz.campaign import gpus
from aliasfuzz.campaign import pool as pool_mod
from aliasfuzz.campaign.options import CampaignOptions

# A stand-in for the worker child: ready at once, then answers each task with the
# CUDA_VISIBLE_DEVICES it was started with.
_FAKE_CHILD = """
import json, os, sys
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    print(json.dumps({"verdict": "ok", "cvd": os.environ.get("CUDA_VISIBLE_DEVICES")}), flush=True)
"""


@pytest.fixture
def spawned(monkeypatch):
    """Worker children replaced by :data:`_FAKE_CHILD`; yields the list of (worker folder,
    CUDA_VISIBLE_DEVICES) each child was started with, in start order."""
    real, seen = subprocess.Popen, []

    def fake(args, **kw):
        seen.append((kw["env"]["ALIASFUZZ_WORKDIR"].split("/")[-2],
                     kw["env"].get("CUDA_VISIBLE_DEVICES")))
        return real([sys.executable, "-c", _FAKE_CHILD], **kw)

    monkeypatch.setattr(subprocess, "Popen", fake)
    return seen


def _pool(tmp_path, n_gpus, monkeypatch, **kw):
    monkeypatch.setattr(gpus, "gpu_count", lambda: n_gpus)
    return pool_mod.Pool(CampaignOptions(programs=1, **kw), tmp_path / "w")


def test_cuda_workers_go_round_robin_over_the_gpus_and_keep_theirs_when_restarted(
        tmp_path, monkeypatch, spawned):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    pool = _pool(tmp_path, 3, monkeypatch, device="cuda", workers=5, recycle=2)
    try:
        assert pool.gpus == ["0", "1", "2"] and pool.workers_per_gpu() == [2, 2, 1]
        for k, w in enumerate(pool.workers):
            # three tasks with recycle 2: a restart after the second; then a forced one
            got = [w.run({})["cvd"] for _ in range(3)]
            w.close()
            got.append(w.run({})["cvd"])
            assert got == [str(k % 3)] * 4 and w.started == 3
    finally:
        pool.close()
    want = [(f"w{k}", str(k % 3)) for k in range(5) for _ in range(3)]
    assert sorted(spawned) == sorted(want)


def test_an_existing_cuda_visible_devices_list_is_mapped_to_its_entries(
        tmp_path, monkeypatch, spawned):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4, GPU-abc,6")
    pool = _pool(tmp_path, 2, monkeypatch, device="cuda", workers=3)  # CUDA found 2 of 3
    try:
        assert [w.run({})["cvd"] for w in pool.workers] == ["4", "GPU-abc", "4"]
    finally:
        pool.close()


def test_cpu_campaign_workers_inherit_the_drivers_devices(tmp_path, monkeypatch, spawned):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,2")
    pool = _pool(tmp_path, 2, monkeypatch, device="cpu", workers=2)
    try:
        assert pool.gpus == [] and [w.run({})["cvd"] for w in pool.workers] == ["1,2"] * 2
    finally:
        pool.close()


@pytest.mark.parametrize("device,cores,n,want", [
    ("cpu", 2, 4, 2), ("cpu", 16, 4, 4), ("cuda", 2, 1, 2), ("cuda", 16, 1, 4),
    ("cuda", 16, 2, 8), ("cuda", 6, 2, 6), ("cuda", 128, 8, 32), ("cuda", 2, 4, 4),
    ("cuda", 16, 0, 4),
])
def test_default_workers_are_per_gpu_from_the_cores(device, cores, n, want):
    assert gpus.default_workers(device, cores=cores, gpus=n) == want


def test_campaign_options_default_workers_follow_the_device(monkeypatch):
    monkeypatch.setattr(gpus, "gpu_count", lambda: 2)
    monkeypatch.setattr(gpus.os, "cpu_count", lambda: 16)
    assert CampaignOptions(device="cuda").workers == 8
    assert CampaignOptions(device="cpu").workers == 4
    assert CampaignOptions(device="cuda", workers=3).workers == 3


def _reader(values, fail=()):
    calls = []

    def read(slot):
        calls.append(slot)
        if slot in fail:
            raise RuntimeError("NVML: GPU is lost")
        return values[slot][min(calls.count(slot), len(values[slot])) - 1]

    return read, calls


def test_sampler_summarizes_each_gpu_and_skips_failing_reads():
    read, calls = _reader({0: [(10.0, 100.0), (50.0, 300.0), (30.0, 200.0)]}, fail={1})
    s = gpus.GpuSampler(["0", "1"], [2, 1], reader=(["A", "B"], read), every=0.01).start()
    deadline = time.monotonic() + 10
    while calls.count(0) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    rows = s.stop()
    assert not s._thread.is_alive()
    n = calls.count(0)
    assert n >= 3 and calls.count(1) == n  # both read each period, slot 1 always failing
    utils = [10.0, 50.0] + [30.0] * (n - 2)
    assert rows[0] == {"index": 0, "device": "0", "name": "A", "workers": 2,
                       "util_mean_percent": round(sum(utils) / n, 1), "util_max_percent": 50.0,
                       "mem_max_mib": 300, "samples": n}
    assert rows[1] == {"index": 1, "device": "1", "name": "B", "workers": 1,
                       "util_mean_percent": None, "util_max_percent": None,
                       "mem_max_mib": None, "samples": 0}
    assert "not measured" in gpus.format_row(rows[1])
    assert "): 1 worker," in gpus.format_row(rows[1])  # not "1 workers"
    assert "): 2 workers," in gpus.format_row(rows[0])
    assert f"mean {sum(utils) / n:.0f}% max 50%, memory max 300 MiB ({n} samples)" in \
        gpus.format_row(rows[0])


def test_a_campaign_shorter_than_a_period_gets_one_sample_and_none_without_nvml():
    read, calls = _reader({0: [(70.0, 1024.0)]})
    rows = gpus.GpuSampler(["3"], [1], reader=(["A"], read), every=60).start().stop()
    assert calls == [0] and rows[0]["samples"] == 1 and rows[0]["util_max_percent"] == 70.0
    rows = gpus.GpuSampler(["3"], [4], reader=None).start().stop()
    assert rows == [{"index": 0, "device": "3", "name": None, "workers": 4,
                     "util_mean_percent": None, "util_max_percent": None,
                     "mem_max_mib": None, "samples": 0}]


def test_nvml_reader_maps_indices_and_uuids_and_is_none_without_pynvml(monkeypatch):
    fake = types.ModuleType("pynvml")
    fake.nvmlInit = lambda: None
    fake.nvmlDeviceGetHandleByIndex = lambda i: ("idx", i)
    fake.nvmlDeviceGetHandleByUUID = lambda u: ("uuid", u)
    fake.nvmlDeviceGetName = lambda h: f"{h[0]}-{h[1]}".encode()
    fake.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=len(str(h[1])))
    fake.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=3 * 2**20)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    names, read = gpus.nvml_reader(["12", "GPU-xy"])
    assert names == ["idx-12", "uuid-GPU-xy"]
    assert read(0) == (2.0, 3.0) and read(1) == (6.0, 3.0)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed: import fails
    assert gpus.nvml_reader(["0"]) is None


def test_workers_and_nvml_count_gpus_in_one_order(monkeypatch):
    # CUDA's default order (fastest first) and NVML's (PCI bus) differ on a host of mixed
    # GPUs: a worker's index and its utilization row must name the same GPU
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    assert gpus.worker_gpu(3, ["0", "1"]) == {"CUDA_VISIBLE_DEVICES": "1",
                                              "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert gpus.worker_gpu(0, []) == {}
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "FASTEST_FIRST")  # the user's own order is kept
    assert gpus.worker_gpu(0, ["0"])["CUDA_DEVICE_ORDER"] == "FASTEST_FIRST"
    fake = types.ModuleType("pynvml")
    fake.nvmlInit = lambda: None
    fake.nvmlDeviceGetHandleByIndex = lambda i: ("idx", i)
    fake.nvmlDeviceGetHandleByUUID = lambda u: ("uuid", u)
    fake.nvmlDeviceGetName = lambda h: b"H"
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert gpus.nvml_reader(["0"]) is None  # an index in another order: not measured
    assert gpus.nvml_reader(["GPU-xy"])[0] == ["H"]  # a UUID names one GPU in any order
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    assert gpus.nvml_reader(["0"])[0] == ["H"]


def test_merge_rows_weights_means_by_samples():
    def row(i, mean, mx, mem, n, w=2):
        return {"index": i, "device": str(i), "name": "H", "workers": w,
                "util_mean_percent": mean, "util_max_percent": mx, "mem_max_mib": mem,
                "samples": n}

    merged = gpus.merge_rows([[row(0, 20.0, 40.0, 100, 1), row(1, None, None, None, 0)],
                              [row(0, 80.0, 90.0, 50, 3, w=4), row(1, 10.0, 10.0, 7, 2)]])
    assert merged == [row(0, 65.0, 90.0, 100, 4, w=4), row(1, 10.0, 10.0, 7, 2)]
    assert json.loads(json.dumps(merged)) == merged
