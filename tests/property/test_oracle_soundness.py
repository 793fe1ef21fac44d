"""Soundness of the ground truth: a candidate the oracle calls safe can be forced in place.

For random programs (the campaign's generator, fixed seeds), every candidate that the
pass kept a copy for and the oracle calls *safe* (in programs the pipeline gets right)
is forced in place (rerunning the
``inductor-reinplace`` pipeline) and must still agree with eager on the default and a
random input. A disagreement in values or inputs after the call is a bug in the ground
truth (a false "safe"). Output *identity* (check 3, e.g. an empty output that now shares an
input's storage) is outside the ground truth, which decides memory contents: there the
forced run's aliasing check keeps the claim unconfirmed (unknown), never a finding. The
default run checks 25 programs; ``-m fuzz`` runs 300.
"""

from __future__ import annotations

import pytest

from aliasfuzz.fuzz.eager import make_inputs
from aliasfuzz.fuzz.render import load_function
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.oracle import confirm
from aliasfuzz.oracle.judge import _as_result, _claims, _selector
from aliasfuzz.passes.pipelines import run_function, run_pipeline


def _forced_safe_candidates_agree(n: int, seed: int) -> tuple[int, list[str]]:
    forced, bad = 0, []
    for p in generate(n, seed=seed):
        ex = run_pipeline("inductor-reinplace", p, make_inputs(p))
        if ex.failure is not None:
            continue
        fn, _ = load_function(p)
        names = [t.name for t in p.inputs]

        def run(ins, fn=fn, names=names):
            return _as_result(run_function("inductor-reinplace", fn, ins, input_names=names))

        eager = confirm.run_callable_named(fn, names, make_inputs(p))
        if eager.error is not None or confirm._same(eager, _as_result(ex), names):
            continue  # the pipeline already disagrees with eager: nothing to force against

        for c in _claims(ex):
            if c.decision.reinplaced or c.truth is None or c.truth.status != "safe":
                continue
            variants = confirm.input_variants(lambda p=p: make_inputs(p), 1)
            res = confirm.confirm_missed(run, fn, names, variants, _selector(c))
            if res.confirmed:
                forced += 1
            elif "could not be forced" not in res.message and "aliasing:" not in res.message:
                bad.append(f"seed {seed} #{p.meta['index']} {c.decision.node} ({c.decision.arg}): {res.message}")
    return forced, bad


def test_safe_candidates_can_be_forced_in_place():
    forced, bad = _forced_safe_candidates_agree(25, seed=11)
    assert bad == []
    assert forced > 0  # the property was exercised


@pytest.mark.fuzz
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_safe_candidates_can_be_forced_in_place_many(seed):
    _, bad = _forced_safe_candidates_agree(100, seed=seed)
    assert bad == []
