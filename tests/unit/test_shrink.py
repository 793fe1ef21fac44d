"""Minimizing findings with Hypothesis's shrinker (``aliasfuzz.campaign.shrink``), driven by
stub ``evaluate`` functions; shrinking through real workers is in ``tests/e2e``."""

from __future__ import annotations

import pytest

from aliasfuzz.campaign.shrink import reduce_program, same_failure, shrink, without_statement
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec

BAD = {"verdict": "miscompile", "check": "values"}
OK = {"verdict": "ok", "check": None}


def _ten() -> Program:
    """Ten statements over one input, with a known dependency structure."""
    body = (
        Op("sin", ("x",), {}, ("v0",)),  # 0
        Op("clone", ("x",), {}, ("v1",)),  # 1
        Op("sin", ("v0",), {}, ("v2",)),  # 2 <- 0
        Op("add", ("v1", "v2"), {}, ("v3",)),  # 3 <- 1, 2
        Op("clone", ("v0",), {}, ("v4",)),  # 4 <- 0
        Op("mul.Scalar", ("v4",), {"other": 2.0}, ("v5",)),  # 5 <- 4
        Op("add_.Scalar", ("v5",), {"other": 1.0}, ("v6",)),  # 6 <- 5
        Op("sin", ("v1",), {}, ("v7",)),  # 7 <- 1
        Op("clone", ("v3",), {}, ("v8",)),  # 8 <- 3
        Op("mul.Scalar", ("v7",), {"other": 3.0}, ("v9",)),  # 9 <- 7
    )
    p = Program(
        (StorageSpec("s0", 16),),
        (TensorSpec("x", "s0", (4, 4), (4, 1)),),
        body,
        ("v8", "v9", "v6"),
    )
    p.validate()
    return p


def _closure(program: Program, indices: set[int]) -> set[int]:
    """``indices`` and every statement they use, transitively."""
    defined = {o: i for i, op in enumerate(program.body) for o in op.out}
    todo, seen = list(indices), set()
    while todo:
        i = todo.pop()
        if i not in seen:
            seen.add(i)
            todo += [defined[a] for a in program.body[i].args if a in defined]
    return seen


class Needs:
    """A stub ``evaluate``: the failure needs every op of ``ops`` in the program."""

    def __init__(self, ops):
        self.ops, self.calls = list(ops), []

    def __call__(self, p: Program) -> dict:
        self.calls.append(p.dumps())
        return dict(BAD) if all(op in p.body for op in self.ops) else dict(OK)


def test_reduce_program_drops_dependents_and_their_outputs():
    p = _ten()
    keep = [i != 1 for i in range(10)]  # v1 feeds 3 (then 8) and 7 (then 9)
    r = reduce_program(p, keep, [True, True, True])
    assert [p.body.index(op) for op in r.body] == [0, 2, 4, 5, 6]
    assert r.outputs == ("v6",)
    assert without_statement(p, 1) == r
    r = reduce_program(p, [True] * 10, [False, True, False])
    assert r.body == p.body and r.outputs == ("v9",)
    with pytest.raises(ValueError):
        reduce_program(p, [True] * 9, [True] * 3)


@pytest.mark.parametrize("pair", [(3, 9), (6, 7), (0, 1), (8, 5)])
def test_shrinks_to_exactly_the_two_needed_statements_and_their_dependencies(pair):
    p = _ten()
    need = Needs(p.body[i] for i in pair)
    small, out, spent = shrink(p, need(p), need, budget=200)
    want = _closure(p, set(pair))
    assert len(want) < 10
    assert [p.body.index(op) for op in small.body] == sorted(want)
    assert small.outputs == ()  # the stub's failure needs no output
    assert same_failure(BAD, out)
    assert spent == len(need.calls) - 1  # the first call was the campaign's run, above


def test_shrinking_is_deterministic():
    p = _ten()
    runs = []
    for _ in range(2):
        need = Needs([p.body[3], p.body[9]])
        small, _, spent = shrink(p, dict(BAD), need, budget=200)
        runs.append((small, spent, need.calls))
    assert runs[0] == runs[1]
    assert len(runs[0][2]) > 3  # it did search


def test_identical_candidates_run_once():
    p = _ten()
    need = Needs([p.body[3], p.body[9]])
    shrink(p, dict(BAD), need, budget=200)
    assert len(need.calls) == len(set(need.calls))


@pytest.mark.parametrize("budget", [0, 1, 2, 5])
def test_budget_bounds_the_executions(budget):
    p = _ten()
    need = Needs([p.body[3], p.body[9]])
    small, out, spent = shrink(p, dict(BAD), need, budget=budget)
    assert spent == len(need.calls) <= budget
    assert same_failure(BAD, out) and need(small) == BAD  # still the finding
    unlimited = shrink(p, dict(BAD), Needs([p.body[3], p.body[9]]), budget=200)
    assert spent < unlimited[2]
    if budget <= 1:  # 0: nothing run; 1: only the replay of the original
        assert small == p
    else:
        assert len(small.body) <= len(p.body)


def test_the_first_execution_replays_the_original_and_a_fixed_bug_stays_unshrunk():
    p = _ten()
    need = Needs([p.body[3], p.body[9]])
    shrink(p, dict(BAD), need, budget=200)
    assert need.calls[0] == p.dumps()
    calls = []

    def fixed(q):
        calls.append(q)
        return dict(OK)

    small, out, spent = shrink(p, dict(BAD), fixed, budget=200)
    assert (small, out, spent) == (p, BAD, 1) and calls == [p]


def test_an_empty_program_is_its_own_minimum():
    p = _ten().with_body((), ())
    small, out, spent = shrink(p, dict(BAD), lambda q: dict(BAD), budget=5)
    assert (small, spent) == (p, 1)


def test_an_exception_in_evaluate_is_raised_not_shrunk():
    p = _ten()
    calls = []

    def broken(q):
        calls.append(q)
        if len(calls) == 3:
            raise RuntimeError("worker failed to start")
        return dict(BAD)

    with pytest.raises(RuntimeError, match="worker failed to start"):
        shrink(p, dict(BAD), broken, budget=50)
    assert len(calls) == 3  # nothing ran after the error
