"""Trace once per program in campaigns (issue 16): a program's Dynamo-fronted pipelines run
in one worker task from one Dynamo capture, with the same verdicts as one capture per
pipeline; a shared task that does not answer every pipeline runs them one by one."""

from __future__ import annotations

import json
from pathlib import Path

from aliasfuzz.campaign.driver import _shared_group, run_campaign
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.campaign.pool import Pool
from aliasfuzz.fuzz.sample import generate_one

PIPELINES = ("inductor-reinplace", "inductor", "aot_eager", "fx-reinplace")


def _campaign(tmp_path: Path, share: bool):
    opts = CampaignOptions(
        programs=6, seed=5, workers=2, pipelines=PIPELINES, share_trace=share, shrink=False,
        corpus=str(tmp_path / f"corpus-{share}"), state=str(tmp_path / f"state-{share}"),
        report="none",
    )
    res = run_campaign(opts, show=False)
    events = [json.loads(x) for x in (res.dir / "journal.jsonl").read_text().splitlines()]
    return res, [e for e in events if e["t"] == "task"]


def test_fixed_seed_campaign_has_the_same_verdict_counts_with_one_capture(tmp_path):
    alone, alone_tasks = _campaign(tmp_path, share=False)
    shared, shared_tasks = _campaign(tmp_path, share=True)
    assert alone.status == shared.status == "done"
    assert sum(alone.verdicts.values()) == 24
    assert shared.verdicts == alone.verdicts
    # the same programs, mutants among them (the default --mutate): both campaigns list the
    # same sources at their start (an empty corpus each, and the repository's seeds), and a
    # mutant is a function of the seed, its index and those sources
    assert alone.mutants == shared.mutants > 0
    assert {(e["i"], e["h"], e.get("mutated_from")) for e in shared_tasks} == {
        (e["i"], e["h"], e.get("mutated_from")) for e in alone_tasks}
    per_task = {(e["i"], e["pipeline"]): (e["outcome"]["verdict"], e["outcome"]["check"])
                for e in alone_tasks}
    assert {(e["i"], e["pipeline"]): (e["outcome"]["verdict"], e["outcome"]["check"])
            for e in shared_tasks} == per_task
    # sharing happened (and only where asked for)
    assert any("pipeline.shared" in e["costs"] for e in shared_tasks)
    assert not any("pipeline.shared" in e["costs"] for e in alone_tasks)


class _FakeWorker:
    """Answers a group task with a death, single tasks with their pipeline's name."""

    start_seconds = 0.0

    def __init__(self):
        self.tasks = []

    def run(self, task, timeout=None):
        self.tasks.append((task, timeout))
        if "pipelines" in task:
            return {"verdict": "crash", "check": "signal:SIGSEGV", "explanation": "died"}
        return {"verdict": "ok", "check": None, "explanation": task["pipeline"], "costs": {}}


def test_a_group_whose_worker_dies_runs_each_pipeline_alone(tmp_path):
    opts = CampaignOptions(programs=1, workers=1, timeout=10.0, corpus=str(tmp_path / "c"),
                           state=str(tmp_path / "s"), report="none")
    pool = Pool(opts, tmp_path / "workers")
    try:
        fake = _FakeWorker()
        names = ["inductor-reinplace", "aot_eager"]
        out = pool._group(fake, generate_one(0, 0), names)
    finally:
        pool.close()
    assert {p: o["explanation"] for p, o in out.items()} == {p: p for p in names}
    assert fake.tasks[0][1] == 20.0  # the group's timeout: per pipeline times their number
    assert [t["pipeline"] for t, _ in fake.tasks[1:]] == names
    assert out["inductor-reinplace"]["costs"]["shared.lost"] >= 0.0


def test_only_dynamo_fronted_pipelines_are_grouped():
    assert _shared_group(list(PIPELINES) + ["torchscript"]) == [
        "inductor-reinplace", "inductor", "aot_eager"]
    assert _shared_group(["aot_eager", "fx-reinplace"]) == []


_MUTANT_SCRIPT = """
import json, sys
from aliasfuzz.plugins import load_from_env
from aliasfuzz.campaign import _judge
load_from_env()
names = ["inductor-reinplace", "aot_eager"]
rows = []
for i in range(int(sys.argv[1])):
    p = _judge.generate(0, i)
    group = _judge.evaluate_group(p, names, "cpu")
    for n in names:
        alone = _judge.evaluate(p, n, "cpu")
        rows.append([i, n, group[n]["verdict"], alone["verdict"], group[n]["explanation"],
                     alone["explanation"]])
print(json.dumps(rows))
"""


def test_a_seeded_mutant_is_found_the_same_from_one_capture(tmp_path):
    """m5_always_clone (bench/mutants: the reinplace pass always clones) under the plugin:
    every program's verdict and explanation are the same from a shared capture, and the
    kept copies are seen: a confirmed, measured copy is a missed reinplace, or, where the
    excess's growth cannot be measured (the program's own shapes do not take doubled
    inputs, oracle/judge.py _cost_gate), an unknown that says so."""
    import os
    import subprocess
    import sys

    from aliasfuzz import plugins

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, plugins.ENV: str(root / "bench" / "mutants" / "m5_always_clone.py")}
    r = subprocess.run([sys.executable, "-c", _MUTANT_SCRIPT, "24"], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(r.stdout.strip().splitlines()[-1])
    assert [(g, ge) for _, _, g, _, ge, _ in rows] == [(a, ae) for _, _, _, a, _, ae in rows]
    assert any(n == "inductor-reinplace" and (g == "missed-reinplace" or (
        g == "unknown" and "growth not measured" in e)) for _, n, g, _, e, _ in rows)
