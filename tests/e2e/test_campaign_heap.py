"""A program whose compiled code corrupts the heap, end to end: the worker dies wherever
glibc notices (in aliasfuzz, in eager, or not at all), the campaign confirms the corruption
with the pipeline alone in child interpreters (oracle.heap), writes the finding unshrunk,
blames a compiled stage, and its repro dies of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.fuzz.ir import Program

DATA = Path(__file__).resolve().parents[1] / "data"


def test_twelfth_campaign_program_1428_is_a_heap_corruption_finding(tmp_path, monkeypatch):
    program = Program.from_json(json.loads((DATA / "heap" / "s20261206-1428.json").read_text()))
    generate = _judge.generate
    monkeypatch.setattr(_judge, "generate",
                        lambda seed, i, m=8: program if i == 0 else generate(seed, i, m))
    for attempt in ("a", "b"):  # glibc does not notice every corruption: one more try
        opts = CampaignOptions(programs=1, seed=1, pipelines=("inductor",), workers=1,
                               corpus=str(tmp_path / attempt / "corpus"),
                               state=str(tmp_path / attempt / "state"), report="none")
        res = run_campaign(opts, show=False)
        assert res.status == "done" and res.internal_errors == 0
        if res.findings and res.findings[0]["verdict"] == "crash":
            break
    (finding,) = res.findings
    assert (finding["verdict"], finding["check"][:7]) == ("crash", "signal:")
    assert finding["stage"] in ("lowering", "scheduler", "codegen:cpp-vectorized"), finding
    entry = tmp_path / attempt / "corpus" / finding["id"]
    meta = json.loads((entry / "meta.json").read_text())
    assert "inductor corrupts the heap" in meta["explanation"]
    assert meta["shrink_executions"] == 0  # the confirmation is its replay, not the shrinker
    repro = subprocess.run([sys.executable, str(entry / "repro.py")], capture_output=True,
                           text=True, timeout=600)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert "corrupts the heap" in (entry / "repro.py").read_text().splitlines()[0]
