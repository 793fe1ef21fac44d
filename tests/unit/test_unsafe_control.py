"""An unsafe-reinplace claim is confirmed only by a departure of the decision's own: one the
pipeline with Inductor's reinplace pass off does not show too (fourth audit, f88cbff55f:
functionalization's lost write, #196657, blamed on the pass). ``oracle.confirm.confirm_unsafe``
with a control run and ``oracle.blame.adds_departure``."""

from __future__ import annotations

import torch

from aliasfuzz.fuzz.eager import EagerResult, run_callable
from aliasfuzz.oracle.blame import adds_departure
from aliasfuzz.oracle.confirm import _Names, confirm_unsafe


def _f(x):
    x.add_(1.0)


def _result(*vals) -> EagerResult:
    return EagerResult((), (torch.tensor(vals),), {})


def test_adds_departure_needs_an_element_the_earlier_run_got_right():
    eager = _result(1.0, 2.0, 3.0)
    early = _result(1.0, 9.0, 3.0)
    assert not adds_departure(eager, early, _result(1.0, 9.0, 3.0))  # the same departure
    assert adds_departure(eager, early, _result(7.0, 9.0, 3.0))  # a new element departs
    assert adds_departure(eager, eager, early)


def _run_giving(vals):
    def run(ins):
        return _result(*vals)

    return run


def test_a_departure_the_pass_off_control_shows_too_is_not_confirmed():
    variants = [(torch.zeros(3),)]  # eager: x becomes [1, 1, 1]
    wrong = _run_giving((1.0, 5.0, 1.0))
    assert run_callable(_f, _Names(["x"]), (torch.zeros(3),)).inputs_after[0].tolist() == [1, 1, 1]
    c = confirm_unsafe(wrong, _f, ["x"], variants)
    assert c.confirmed
    c = confirm_unsafe(wrong, _f, ["x"], variants, control=_run_giving((1.0, 5.0, 1.0)))
    assert not c.confirmed and "reinplace pass off" in c.message
    c = confirm_unsafe(wrong, _f, ["x"], variants, control=_run_giving((1.0, 1.0, 1.0)))
    assert c.confirmed
