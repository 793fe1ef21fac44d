"""A fresh campaign end to end (issue 13): every root cause it writes gets a repro.py that
runs with torch alone and exits as the finding says, public ones within the line budget,
and the campaign's report folder holds an upstream issue draft per new root cause.

Seed 0's first 11 programs give, on torch 2.13 CPU, a functionalization miscompile with a
user Triton kernel (hit by the fast path, aot_eager and fx-reinplace), which
``corpus/known.toml`` knows as pytorch/pytorch#196657; the campaign's corpus gets an empty
known list so that its roots are new and get drafts. The test holds for any outcome, but
asserts that the campaign found something.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest
import torch

from aliasfuzz.campaign.corpus import list_entries, load_entry
from aliasfuzz.campaign.repro import MAX_LINES, plan, render_repro
from aliasfuzz.cli import main


@pytest.mark.slow
def test_fresh_campaign_repros_and_upstream_drafts(tmp_path, capsys):
    corpus, reports = tmp_path / "corpus", tmp_path / "reports"
    corpus.mkdir()
    (corpus / "known.toml").write_text("# no known bugs: every root cause is new\n")
    rc = main(["run", "--programs", "11", "--seed", "0", "--workers", "2",
               "--pipelines", "inductor-reinplace,aot_eager,fx-reinplace,torchscript",
               "--corpus", str(corpus), "--state", str(tmp_path / "state"),
               "--report", str(reports), "-q",
               "--mutate", "0"])  # the generator's programs, the ones the docstring names
    out = capsys.readouterr().out
    assert rc in (0, 1), out
    entries = [load_entry(p) for p in list_entries(corpus)]
    assert entries, out
    lines = []
    for e in entries:
        # rendered from the entry's meta as it stands (all its hits); the corpus's repro.py
        # was rendered when the entry was written, from its first hit
        text = render_repro(e.program, e.meta)
        path = tmp_path / f"{e.path.name}.py"
        path.write_text(text)
        assert "import aliasfuzz" not in text and "from aliasfuzz" not in text
        p = plan(e.program, e.meta)
        if not p.harness:
            assert len(text.splitlines()) <= MAX_LINES, e.path.name
        lines.append(len(text.splitlines()))
        run = subprocess.run([sys.executable, str(path)], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        if p.cuda and not torch.cuda.is_available():
            assert run.returncode == 3, run.stdout + run.stderr
            assert run.stdout.strip().splitlines()[-1] == "CANNOT RUN HERE: needs a GPU"
        else:
            assert run.returncode == 1, (e.path.name, run.stdout + run.stderr)
    print(f"repro.py lines: median {statistics.median(lines)} over {len(lines)} entries")
    # the report folder of the campaign: an issue draft per new root cause
    (folder,) = [d for d in reports.iterdir() if d.is_dir()]
    summary = json.loads((folder / "summary.json").read_text())
    new = [r["id"] for r in summary["root_causes"] if r["status"] == "new"]
    assert new and sorted(summary["upstream_drafts"]) == sorted(f"upstream/{i}.md" for i in new)
    for i in new:
        assert (folder / "upstream" / f"{i}.md").read_text().startswith("# [")
