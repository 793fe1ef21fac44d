"""A finding no stage cut reproduces is written only when its pipeline shows it again in a
fresh process (:func:`aliasfuzz.campaign._judge.fresh_outcome`,
:func:`aliasfuzz.campaign.driver.dismissal`).

The H200 campaign of seed 32 filed ``miscompile-unblamed-inductor-6d5082b08e``: a wrong
value its worker saw twice, which every cut of ``inductor`` (the last one being full
Inductor) gave as eager did, and whose ``repro.py`` printed "fixed" three times out of
three. A genuine crash that the cut misses (``crash-unblamed-torchscript-8691e5ac2a`` was
filed so, its repro exits 1) is kept: the fresh run shows it.
"""

from __future__ import annotations

from pathlib import Path

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign.corpus import load_entry
from aliasfuzz.campaign.driver import dismissal
from aliasfuzz.oracle.blame import NOT_REPRODUCED
from tests.common.repro_cases import CASES

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
WRONG = {"verdict": "miscompile", "check": "values", "explanation": "out0: values differ at [7, 0]"}


def _unblamed(fresh: dict) -> dict:
    return {"stage": None, "stages": [], "trail": [], "reason": NOT_REPRODUCED, "fresh": fresh}


def test_a_finding_its_fresh_run_does_not_show_is_not_written():
    kind, why = dismissal(dict(WRONG), "inductor", _unblamed({"verdict": "ok", "check": None}))
    assert kind == "flaky"
    assert "nor by inductor in a fresh process, which gave ok/None" in why


def test_a_finding_its_fresh_run_shows_again_is_written():
    # an output or the input it aliases: one failure (check_class)
    again = {"verdict": "miscompile", "check": "inputs", "explanation": "input x0: ..."}
    assert dismissal(dict(WRONG), "inductor", _unblamed(again)) is None
    assert dismissal(dict(WRONG), "inductor", {"stage": None, "reason": NOT_REPRODUCED}) is None


def test_the_fresh_run_judges_in_a_child_interpreter():
    program = _judge.generate(0, 1)
    here = _judge.evaluate(program, "aot_eager", "cpu")
    got = _judge.fresh_outcome(program, "aot_eager", "cpu", None)
    assert set(got) == {"verdict", "check", "explanation"}
    assert (got["verdict"], got["check"]) == (here["verdict"], here["check"])


def test_an_uncut_crash_is_kept_by_its_fresh_run(monkeypatch):
    # a crash of the pipeline's own run that the cut does not show (the legacy executor's
    # crash of this corpus entry was filed unblamed so, before the cut learnt it): the
    # fresh run raises again, so it is written
    import aliasfuzz.oracle.blame as B

    entry = load_entry(CORPUS / "crash-unblamed-torchscript-8691e5ac2a")
    root = entry.meta["root"]
    outcome = {"verdict": root["verdict"], "check": root["check"],
               "explanation": entry.meta["explanation"]}
    monkeypatch.setattr(B, "blame_program", lambda *a, **k: B.Blame(None, (), [], NOT_REPRODUCED))
    b = _judge.blame(entry.program, "torchscript", "cpu", None, outcome)
    assert b["stage"] is None and b["fresh"]["verdict"] == "crash", b
    assert dismissal(outcome, "torchscript", b) is None
    b = _judge.blame(_judge.generate(0, 1), "aot_eager", "cpu", None, dict(WRONG))
    assert b["fresh"]["verdict"] != "miscompile" or b["fresh"]["check"] not in ("values", "inputs")
    assert dismissal(dict(WRONG), "aot_eager", b)[0] == "flaky"
