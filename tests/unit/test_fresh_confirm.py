"""A finding no stage cut reproduces is written only when its pipeline shows it again in a
fresh worker (:func:`aliasfuzz.campaign.pool.blame_in`'s ``fresh``,
:func:`aliasfuzz.campaign.driver.dismissal`).

The H200 campaign of seed 32 filed ``miscompile-unblamed-inductor-6d5082b08e``: a wrong
value its worker saw twice, which every cut of ``inductor`` (the last one being full
Inductor) gave as eager did, and whose ``repro.py`` printed "fixed" three times out of
three. A genuine crash that the cut misses (``crash-unblamed-torchscript-8691e5ac2a`` was
filed so, its repro exits 1) is kept: the fresh run shows it.
"""

from __future__ import annotations

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign import worker as worker_mod
from aliasfuzz.campaign.driver import dismissal
from aliasfuzz.campaign.pool import blame_in
from aliasfuzz.oracle.blame import NOT_REPRODUCED

WRONG = {"verdict": "miscompile", "check": "values", "explanation": "out0: values differ at [7, 0]"}
UNCUT = {"stage": None, "stages": [], "trail": [], "reason": NOT_REPRODUCED}


class _Worker:
    """Answers tasks from a list, recording them and its restarts."""

    def __init__(self, answers: list[dict]) -> None:
        self.answers, self.tasks, self.closed = answers, [], 0

    def run(self, task: dict) -> dict:
        self.tasks.append((self.closed, task))
        return self.answers.pop(0)

    def close(self) -> None:
        self.closed += 1


def test_a_finding_its_fresh_run_does_not_show_is_not_written():
    d = dismissal(dict(WRONG), "inductor", {**UNCUT, "fresh": {"verdict": "ok", "check": None}})
    assert (d.kind, d.cause, d.verdict) == ("flaky", "fresh", "miscompile")
    assert "nor by inductor in a fresh process, which gave ok/None" in d.why


def test_a_finding_its_fresh_run_shows_again_is_written():
    # an output or the input it aliases: one failure (check_class)
    again = {"verdict": "miscompile", "check": "inputs", "explanation": "input x0: ..."}
    assert dismissal(dict(WRONG), "inductor", {**UNCUT, "fresh": again}) is None
    assert dismissal(dict(WRONG), "inductor", {**UNCUT, "fresh": None}) is None  # no answer
    assert dismissal(dict(WRONG), "inductor", dict(UNCUT)) is None


def test_only_an_uncut_finding_runs_again_and_in_a_fresh_worker():
    task = {"program": {}, "pipeline": "inductor", "device": "cpu", "options": {}}
    w = _Worker([{"blame": dict(UNCUT)}, {"verdict": "ok", "check": None, "explanation": "", "seconds": 1}])
    out = blame_in(w, task, dict(WRONG))
    assert [closed for closed, _ in w.tasks] == [0, 1]  # the second run after a restart
    assert w.tasks[1][1] == task  # the pipeline's own task, not a cut
    assert out["blame"]["fresh"] == {"verdict": "ok", "check": None, "explanation": ""}
    assert dismissal(dict(WRONG), "inductor", out["blame"]).kind == "flaky"
    # a blamed finding, and an uncut signal death (driver.unconfirmed_death's), do not
    for answer, outcome in (({"stage": "lowering", "stages": ["lowering"]}, WRONG),
                            (dict(UNCUT), {"verdict": "crash", "check": "signal:SIGSEGV"})):
        w = _Worker([{"blame": dict(answer)}])
        assert "fresh" not in blame_in(w, task, dict(outcome))["blame"]
        assert len(w.tasks) == 1 and w.closed == 0


def test_an_uncut_finding_is_run_again_by_a_real_worker(tmp_path):
    # a program aot_eager judges ok, claimed a miscompile: every cut agrees (the claim is
    # the harness's, as a corrupted worker's would be), and a fresh worker says ok
    program = _judge.generate(0, 1)
    assert _judge.evaluate(program, "aot_eager", "cpu")["verdict"] == "ok"
    task = {"program": program.to_json(), "pipeline": "aot_eager", "device": "cpu", "options": {}}
    w = worker_mod.Worker(tmp_path / "w", timeout=300, recycle=10)
    try:
        out = blame_in(w, task, dict(WRONG))
    finally:
        w.close()
    assert out["blame"]["reason"] == NOT_REPRODUCED, out
    assert out["blame"]["fresh"]["verdict"] == "ok", out
    assert dismissal(dict(WRONG), "aot_eager", out["blame"]).kind == "flaky"
