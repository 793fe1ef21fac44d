"""A campaign's utilization per GPU (:mod:`aliasfuzz.campaign.gpus`): sampled beside the
campaign, journaled, merged into its result, its console summary and ``summary.json``.

Without a GPU the pool's GPUs and NVML are faked around a CPU campaign; with one (``gpu``
marker) a tiny two-worker CUDA campaign samples the real GPUs.
"""

from __future__ import annotations

import json

import pytest

from aliasfuzz.campaign import driver, gpus
from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.report import write_report


@pytest.fixture(autouse=True)
def _debug_pipelines(monkeypatch):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")


def _opts(tmp_path, **kw) -> CampaignOptions:
    return CampaignOptions(corpus=str(tmp_path / "corpus"), state=str(tmp_path / "state"),
                           report="none", shrink=False, **kw)


def _summary(tmp_path, res) -> dict:
    write_report(res.id, state=res.options.state, corpus=res.options.corpus,
                 out=tmp_path / "report")
    return json.loads((tmp_path / "report" / "summary.json").read_text())


def test_gpu_rows_reach_the_result_the_journal_and_summary_json(tmp_path, monkeypatch):
    class TwoGpuPool(driver.Pool):  # CPU workers, as if spread over two GPUs
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.gpus = ["3", "5"]

    reads = []

    def read(slot):
        reads.append(slot)
        return (40.0 + 20 * slot, 1000.0 * (slot + 1))

    monkeypatch.setattr(driver, "Pool", TwoGpuPool)
    monkeypatch.setattr(gpus, "nvml_reader", lambda g: ([f"Fake {e}" for e in g], read))
    res = run_campaign(_opts(tmp_path, programs=2, workers=2, pipelines=("debug-miscompile",)),
                       show=False)
    assert res.status == "done" and reads
    n = reads.count(0)
    want = [
        {"index": 0, "device": "3", "name": "Fake 3", "workers": 1, "util_mean_percent": 40.0,
         "util_max_percent": 40.0, "mem_max_mib": 1000, "samples": n},
        {"index": 1, "device": "5", "name": "Fake 5", "workers": 1, "util_mean_percent": 60.0,
         "util_max_percent": 60.0, "mem_max_mib": 2000, "samples": n},
    ]
    assert res.gpus == want
    events = [json.loads(x) for x in (res.dir / "journal.jsonl").read_text().splitlines()]
    assert [e["gpus"] for e in events if e["t"] == "gpus"] == [want]
    assert _summary(tmp_path, res)["gpus"] == want
    # the report's page has the table, one row per GPU
    page = (tmp_path / "report" / "index.html").read_text()
    table = page[page.index('<table id="gpus">'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 3 and "Fake 5" in table and "60%" in table


def test_a_cpu_campaign_samples_no_gpu(tmp_path, monkeypatch):
    def no_nvml(g):
        raise AssertionError("a CPU campaign asked NVML")

    monkeypatch.setattr(gpus, "nvml_reader", no_nvml)
    res = run_campaign(_opts(tmp_path, programs=1, workers=1, pipelines=("debug-miscompile",)),
                       show=False)
    assert res.status == "done" and res.gpus == []
    assert _summary(tmp_path, res)["gpus"] == []
    assert 'id="gpus"' not in (tmp_path / "report" / "index.html").read_text()


@pytest.mark.gpu
def test_a_cuda_campaign_reports_every_visible_gpu(tmp_path):
    pytest.importorskip("pynvml")
    import torch

    res = run_campaign(_opts(tmp_path, programs=4, workers=2, device="cuda",
                             pipelines=("aot_eager",)), show=False)
    assert res.status == "done"
    rows = _summary(tmp_path, res)["gpus"]
    n = torch.cuda.device_count()
    assert [r["index"] for r in rows] == list(range(n))
    assert sum(r["workers"] for r in rows) == 2
    for r in rows:
        assert r["samples"] > 0 and r["name"] and r["mem_max_mib"] >= 0, r
        assert 0 <= r["util_mean_percent"] <= r["util_max_percent"] <= 100, r
