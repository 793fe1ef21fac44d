"""``aliasfuzz run --dynamic-share`` (issue 15): the chosen share of a campaign's programs is
compiled with ``torch.compile(dynamic=True)`` and judged. Seen from inside the workers: a
pass plugin wraps Inductor's reinplace pass (as the decision spy does) and logs whether
the graph it gets has symbolic sizes (``s0``, ``s0 - 4``), which only a dynamic compile
gives; the same campaign with ``--dynamic-share 0`` logs none."""

from __future__ import annotations

import json
from pathlib import Path

from tests.common.cli import run_cli

#: a worker-side plugin: log one line per reinplace-pass call, ``symbolic`` when a node's
#: FakeTensor has a symbolic size or stride
_SPY = '''
import os
import torch
import torch._inductor.fx_passes.post_grad as pg

_real = pg.reinplace_inplaceable_ops

def _symbolic(val):
    if not isinstance(val, torch.Tensor):
        return False
    return any(isinstance(s, torch.SymInt) for s in (*val.shape, *val.stride()))

def _spy(fake_tensor_updater, graph):
    sym = any(_symbolic(n.meta.get("val")) for n in graph.nodes)
    with open(os.environ["DYNSPY_LOG"], "a") as f:
        f.write(("symbolic" if sym else "static") + "\\n")
    return _real(fake_tensor_updater, graph)

pg.reinplace_inplaceable_ops = _spy
'''


def _campaign(tmp_path: Path, share: str) -> tuple[list[str], list[dict]]:
    """Run 3 programs of seed 2 on the fast path with ``--dynamic-share share``; the
    spy's lines and the journal's task events."""
    spy, log = tmp_path / "spy.py", tmp_path / f"spy-{share}.log"
    spy.write_text(_SPY)
    state = tmp_path / f"state-{share}"
    # a corpus each: program 1 of seed 2 is a mutant (the default --mutate), and a finding
    # the first campaign wrote would be a source of the second's mutants, not the same program
    corpus = tmp_path / f"corpus-{share}"
    corpus.mkdir(exist_ok=True)  # run --corpus refuses a missing directory
    r = run_cli("run", "--programs", "3", "--seed", "2", "--pipelines", "inductor-reinplace",
                "--workers", "1", "--no-shrink", "-q", "--report", "none",
                "--dynamic-share", share, "--grad-share", "0", "--plugin", spy,
                "--corpus", corpus, "--state", state,
                env={"DYNSPY_LOG": str(log)})
    assert r.returncode in (0, 1), r.stderr  # 1: a new miscompile (none seen at seed 2)
    (run,) = (state / "runs").iterdir()
    assert json.loads((run / "options.json").read_text())["dynamic_share"] == float(share)
    events = [json.loads(line) for line in (run / "journal.jsonl").read_text().splitlines()]
    lines = log.read_text().split() if log.exists() else []
    return lines, [e for e in events if e["t"] == "task"]


def test_a_dynamic_share_of_one_compiles_every_program_with_symbolic_sizes(tmp_path):
    lines, tasks = _campaign(tmp_path, "1")
    assert len(tasks) == 3 and all(t.get("dynamic") for t in tasks), tasks
    verdicts = [t["outcome"]["verdict"] for t in tasks]
    assert "internal-error" not in verdicts and "ok" in verdicts, verdicts  # judged
    assert "symbolic" in lines, lines  # compiled dynamic: sizes are SymInts in the graph
    static, tasks0 = _campaign(tmp_path, "0")
    assert static and "symbolic" not in static, static
    assert not any(t.get("dynamic") for t in tasks0)
    # the same programs (the choice does not change them); a static program may have a
    # different verdict only where the oracle's symbolic path is undecided (unknown)
    assert [t["h"] for t in tasks0] != [t["h"] for t in tasks]  # meta["dynamic"] differs
    assert [t["statements"] for t in tasks0] == [t["statements"] for t in tasks]
