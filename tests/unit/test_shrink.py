"""Minimizing findings with Hypothesis's shrinker (``aliasfuzz.campaign.shrink``) and the
reduction moves it draws (``aliasfuzz.campaign.reduce``), driven by stub ``evaluate``
functions; shrinking through real workers is in ``tests/e2e``."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from aliasfuzz.campaign import shrink as shrink_mod
from aliasfuzz.campaign.reduce import (
    BYPASS,
    CANONICAL_CLONE,
    CANONICAL_FACTORY,
    CANONICAL_WRITE,
    DENSE,
    DROP,
    KEEP,
    OWN_STORAGE,
    bypass_targets,
    canonical_forms,
    dense_storages,
    input_options,
    needed_features,
    reduce_inputs,
    statement_options,
)
from aliasfuzz.campaign.shrink import (
    is_valid,
    keep_everything,
    reduce_program,
    reductions,
    same_failure,
    shrink,
    without_statement,
)
from aliasfuzz.fuzz.eager import make_inputs
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.validate import infer

ROOT = Path(__file__).resolve().parents[2]

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


def _rows(p: Program) -> list[tuple]:
    return [(op.op, op.args, op.out) for op in p.body]


def test_a_bypass_needs_only_the_argument_it_stands_for():
    p = _ten()
    acts = [KEEP] * 10
    acts[2], acts[3] = DROP, BYPASS  # v3 = add(v1, v2) without v2: v3 is v1 still
    r = reduce_program(p, acts, [True, True, True])
    r.validate()
    assert ("clone", ("v1",), ("v8",)) in _rows(r) and r.outputs == ("v8", "v9", "v6")
    acts[1] = DROP  # v1 gone: the bypass has nothing to stand for
    r = reduce_program(p, acts, [True, True, True])
    assert "v8" not in {o for op in r.body for o in op.out} and r.outputs == ("v6",)


# The smallest programs holding both needed statements verbatim (their arguments included):
# every producer of a name they read stays, bypassed down to ``x`` as far as it can be.
NEEDED_VERBATIM = {
    (3, 9): [
        ("clone", ("x",), ("v1",)),
        ("sin", ("x",), ("v2",)),  # sin(v0) with sin(x) -> v0 bypassed
        ("add", ("v1", "v2"), ("v3",)),
        ("sin", ("v1",), ("v7",)),
        ("mul.Scalar", ("v7",), ("v9",)),
    ],
    (6, 7): [
        ("clone", ("x",), ("v1",)),
        ("mul.Scalar", ("x",), ("v5",)),  # v4 = clone(v0) and v0 = sin(x) bypassed
        ("add_.Scalar", ("v5",), ("v6",)),
        ("sin", ("v1",), ("v7",)),
    ],
    (0, 1): [("sin", ("x",), ("v0",)), ("clone", ("x",), ("v1",))],
    (8, 5): [
        ("add", ("x", "x"), ("v3",)),  # add(v1, v2): v1 -> x, v2 -> v0 -> x
        ("clone", ("x",), ("v4",)),
        ("mul.Scalar", ("v4",), ("v5",)),
        ("clone", ("v3",), ("v8",)),
    ],
}


@pytest.mark.parametrize("pair", list(NEEDED_VERBATIM))
def test_shrinks_to_the_needed_statements_with_their_producers_bypassed(pair):
    p = _ten()
    need = Needs(p.body[i] for i in pair)
    small, out, spent = shrink(p, need(p), need, budget=200)
    assert _rows(small) == NEEDED_VERBATIM[pair]
    assert len(small.body) <= len(_closure(p, set(pair)))  # what drops alone reach, or less
    assert small.outputs == ()  # the stub's failure needs no output
    assert same_failure(BAD, out)
    assert spent == len(need.calls) - 1  # the first call was the campaign's run, above


class NeedsResults:
    """A stub ``evaluate``: the failure needs a statement of op ``op`` binding ``name``, for
    every ``(op, name)`` of ``wanted``, whatever its arguments."""

    def __init__(self, wanted):
        self.wanted, self.calls = set(wanted), []

    def __call__(self, p: Program) -> dict:
        self.calls.append(p.dumps())
        have = {(op.op, o) for op in p.body for o in op.out}
        return dict(BAD) if self.wanted <= have else dict(OK)


@pytest.mark.parametrize("pair", [(3, 9), (6, 7), (8, 5), (2, 4)])
def test_bypass_leaves_exactly_the_needed_statements(pair):
    p = _ten()
    need = NeedsResults((p.body[i].op, p.body[i].out[0]) for i in pair)
    small, _, _ = shrink(p, need(p), need, budget=200)
    assert sorted(o for op in small.body for o in op.out) == sorted(p.body[i].out[0] for i in pair)
    # each one reads the input directly: its producers were bypassed away
    assert all(set(op.args) == {"x"} for op in small.body)


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
    assert (small, spent) == (p, 1) and calls == [p]
    # the finding's own outcome, marked with what the replay gave: the campaign does not
    # write a finding that its replay does not show (driver.dismissal)
    assert {k: v for k, v in out.items() if k != "unreproduced"} == BAD
    assert out["unreproduced"]["verdict"] == OK["verdict"]
    from aliasfuzz.campaign.driver import dismissal

    d = dismissal(out, "inductor", {"stage": "lowering", "stages": ["lowering"]})
    assert (d.kind, d.cause) == ("flaky", "replay") and "not reproduced when replayed" in d.why
    assert dismissal(dict(BAD), "inductor", {"stage": "lowering", "stages": ["lowering"]}) is None
    # a replay that died by a signal broke the process too: kept (eighth audit 4ceba35550)
    died = {**BAD, "unreproduced": {"verdict": "crash", "check": "signal:SIGSEGV"}}
    assert dismissal(died, "inductor", {"stage": "lowering", "stages": ["lowering"]}) is None
    # no replay at all (budget 0, --no-shrink): the outcome as it came
    assert shrink(p, dict(BAD), fixed, budget=0)[1] == BAD


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


# -- the moves on hand-built programs ----------------------------------------------------
def _f32(name: str, numel: int, seed: int) -> StorageSpec:
    return StorageSpec(name, numel, "float32", "randn", {"seed": seed})


def _out_program() -> Program:
    """``v0 = torch.mul(x, y, out=z); v1 = v0.sin(); v2 = v1.add_(x); return v0, z, v2``."""
    p = Program(
        (_f32("s0", 16, 1), _f32("s1", 16, 2), _f32("s2", 16, 3)),
        (
            TensorSpec("x", "s0", (4, 4), (4, 1)),
            TensorSpec("y", "s1", (4, 4), (4, 1)),
            TensorSpec("z", "s2", (4, 4), (4, 1)),
        ),
        (
            Op("mul.out", ("x", "y", "z"), {}, ("v0",)),
            Op("sin", ("v0",), {}, ("v1",)),
            Op("add_", ("v1", "x"), {}, ("v2",)),
        ),
        ("v0", "z", "v2"),
    )
    p.validate()
    return p


def test_bypass_of_an_out_op_keeps_its_dependents_and_renames_them():
    p = _out_program()
    assert bypass_targets(p) == ((2,), (0,), (0,))  # out=, the first same-typed arg, self
    r = reduce_program(p, [BYPASS, KEEP, KEEP], [True] * 3)
    r.validate()
    assert _rows(r) == [("sin", ("z",), ("v1",)), ("add_", ("v1", "x"), ("v2",))]
    assert r.outputs == ("z", "v2")  # v0 is z now: returned once
    r = reduce_program(p, [KEEP, KEEP, BYPASS], [True] * 3)
    assert _rows(r) == _rows(p)[:2] and r.outputs == ("v0", "z", "v1")
    # dropping instead takes the dependents and their outputs along
    r = reduce_program(p, [DROP, KEEP, KEEP], [True] * 3)
    assert r.body == () and r.outputs == ("z",)


def _views_program() -> Program:
    p = Program(
        (_f32("s0", 16, 1), _f32("s1", 4, 2), StorageSpec("s2", 4, "int64")),
        (
            TensorSpec("x", "s0", (4, 4), (4, 1)),
            TensorSpec("m", "s1", (4,), (1,)),
            TensorSpec("k", "s2", (4,), (1,)),
        ),
        (
            Op("view", ("x",), {"shape": [16]}, ("flat",)),  # 0: shape differs
            Op("transpose", ("x",), {"dim0": 0, "dim1": 1}, ("xt",)),  # 1: (4, 4) like x
            Op("add", ("m", "xt"), {}, ("s",)),  # 2: m broadcasts: its result is xt's type
            Op("add", ("k", "m"), {}, ("km",)),  # 3: float32 (4,): m, not the int64 k
            Op("unbind", ("s",), {"dim": 0}, ("r0", "r1", "r2", "r3")),  # 4: four results
            Op("setitem.Scalar", ("xt",), {"idx": [0], "value": 1.0}, ()),  # 5: binds nothing
            Op("sin", ("flat",), {}, ("f1",)),  # 6
        ),
        ("f1", "r0", "km"),
    )
    p.validate()
    return p


def test_a_view_whose_shape_differs_is_not_bypassable():
    p = _views_program()
    targets = bypass_targets(p)
    assert targets == (None, (0,), (1,), (1,), None, (), (0,))
    with pytest.raises(ValueError, match="statement 0 .view. cannot be bypassed"):
        reduce_program(p, [BYPASS] + [KEEP] * 6, [True] * 3, targets)
    r = reduce_program(p, [KEEP, BYPASS, BYPASS, BYPASS, KEEP, BYPASS, KEEP], [True] * 3)
    r.validate()
    assert _rows(r) == [
        ("view", ("x",), ("flat",)),
        ("unbind", ("x",), ("r0", "r1", "r2", "r3")),  # s -> xt -> x
        ("sin", ("flat",), ("f1",)),
    ]
    assert r.outputs == ("f1", "r0", "m")
    # a statement binding nothing: bypass is drop, so it is offered keep or drop only
    assert reduce_program(p, [KEEP] * 5 + [BYPASS, KEEP], [True] * 3, targets) == reduce_program(
        p, [KEEP] * 5 + [DROP, KEEP], [True] * 3
    )


def _aliased_program(requires_grad: bool = False) -> Program:
    """Two overlapping inputs on one storage: ``x0`` its first 16 elements as (4, 4), ``x1``
    the (4, 4) transposed view from element 4; ``y`` contiguous on its own storage."""
    p = Program(
        (_f32("s0", 20, 7), _f32("s1", 16, 8)),
        (
            TensorSpec("x0", "s0", (4, 4), (4, 1), requires_grad=requires_grad),
            TensorSpec("x1", "s0", (4, 4), (1, 4), 4),
            TensorSpec("y", "s1", (4, 4), (4, 1)),
        ),
        (
            Op("add", ("x1", "y"), {}, ("v0",)),
            Op("mul", ("x0", "v0"), {}, ("v1",)),
        ),
        ("v1",),
    )
    p.validate()
    return p


def _values(p: Program) -> list[torch.Tensor]:
    return [t.detach() for t in make_inputs(p)]


def _storage_ptrs(p: Program) -> list[int]:
    return [t.untyped_storage().data_ptr() for t in make_inputs(p)]


def test_unalias_gives_an_input_a_copy_of_its_storage():
    p = _aliased_program()
    dense = dense_storages(p)
    assert set(dense) == {"x1"}  # x0 and y are contiguous at offset 0
    assert input_options(p, dense) == {"x0": (OWN_STORAGE, KEEP), "x1": (DENSE, OWN_STORAGE, KEEP)}
    r = reduce_inputs(p, {"x1": OWN_STORAGE}, dense=dense)
    r.validate()
    assert [s.name for s in r.storages] == ["s0", "s0_x1", "s1"]
    assert r.storage_by_name["s0_x1"] == StorageSpec("s0_x1", 20, "float32", "randn", {"seed": 7})
    assert r.inputs[1] == TensorSpec("x1", "s0_x1", (4, 4), (1, 4), 4)  # layout kept
    assert r.body == p.body and r.outputs == p.outputs
    assert all(torch.equal(a, b) for a, b in zip(_values(p), _values(r), strict=True))
    ptrs = _storage_ptrs(r)
    assert len(set(ptrs)) == 3 and len(set(_storage_ptrs(p))) == 2
    assert needed_features(p)["input_features"] == ["aliased-inputs", "strided-inputs"]
    assert needed_features(r)["input_features"] == ["strided-inputs"]
    # both moved: the storage nobody uses is gone
    r = reduce_inputs(p, {"x0": OWN_STORAGE, "x1": OWN_STORAGE})
    assert [s.name for s in r.storages] == ["s0_x0", "s0_x1", "s1"]
    with pytest.raises(ValueError, match="unknown inputs"):
        reduce_inputs(p, {"nope": OWN_STORAGE})


STRIDED_STORAGES = [
    _f32("s0", 20, 3),
    StorageSpec("s0", 20, "bfloat16", "randn", {"seed": 4}),
    StorageSpec("s0", 20, "float64", "linspace", {"start": -1.0, "end": 3.0}),
    StorageSpec("s0", 20, "int64", "randint", {"seed": 5, "low": -100, "high": 100}),
    StorageSpec("s0", 20, "bool", "randint", {"seed": 6}),
]


@pytest.mark.parametrize("storage", STRIDED_STORAGES, ids=lambda s: s.dtype)
def test_densify_preserves_values_and_dtype(storage):
    x = TensorSpec("x", "s0", (3, 4), (1, 5), 2)  # transposed, offset 2
    w = TensorSpec("w", "s0", (2,), (1,))  # keeps s0 alive
    p = Program((storage,), (x, w), (Op("clone", ("x",), {}, ("c",)),), ("c", "w"))
    p.validate()
    r = reduce_inputs(p, {"x": DENSE})
    r.validate()
    assert [s.name for s in r.storages] == ["s0", "s0_x"]
    new = r.storage_by_name["s0_x"]
    assert (new.init, new.numel, new.dtype) == ("values", 12, storage.dtype)
    assert r.inputs[0] == TensorSpec("x", "s0_x", (3, 4), (4, 1), 0)
    before, after = _values(p), _values(r)
    assert after[0].is_contiguous() and after[0].storage_offset() == 0
    assert after[0].dtype == before[0].dtype and torch.equal(after[0], before[0])
    assert torch.equal(after[1], before[1])
    assert needed_features(p)["input_features"] == ["aliased-inputs", "strided-inputs"]
    assert needed_features(r)["input_features"] == []


def test_densify_is_not_offered_where_values_would_not_round_trip():
    big = StorageSpec("s0", 8, "int64", "randint", {"seed": 1, "low": 2**60, "high": 2**61})
    p = Program((big,), (TensorSpec("x", "s0", (4,), (2,)),), ())
    p.validate()
    assert dense_storages(p) == {} and input_options(p, {}) == {}
    with pytest.raises(ValueError, match="no dense storage"):
        reduce_inputs(p, {"x": DENSE})


def test_needed_features_names_op_kinds_and_input_features():
    p = _out_program()
    assert needed_features(p) == {
        "op_kinds": ["functional", "inplace", "out"],
        "input_features": [],
    }
    q = _aliased_program(requires_grad=True)
    assert needed_features(q) == {
        "op_kinds": ["functional"],
        "input_features": ["aliased-inputs", "requires-grad", "strided-inputs"],
    }
    assert needed_features(reduce_inputs(q, {"x1": DENSE}, drop_grad={"x0"})) == {
        "op_kinds": ["functional"],
        "input_features": [],
    }


# -- the strategy's replay and the shrinker with the new moves ---------------------------
def _e60() -> Program:
    from tests.common.audit import program_of

    return program_of("miscompile-aot_eager-e60bdbfb27")  # frozen audit data (tests/data/audit)


@pytest.mark.parametrize(
    "make",
    [_ten, _out_program, _views_program, _aliased_program, lambda: _aliased_program(True), _e60],
)
def test_keep_everything_replays_the_program_itself(make):
    """The choice sequence saved for the reuse phase must be exactly what ``reductions``
    draws, value types included, or the first execution is not the finding."""
    from hypothesis.database import choices_from_bytes, choices_to_bytes
    from hypothesis.internal.conjecture.data import ConjectureData

    p = make()
    choices = keep_everything(p)
    assert choices_from_bytes(choices_to_bytes(choices)) == tuple(choices)
    data = ConjectureData.for_choices(choices)
    assert data.draw(reductions(p)) == p
    assert data.choices == tuple(choices)


def test_the_e60bdbfb27_launch_shrinks_to_one_tensor_given_twice():
    """corpus/miscompile-aot_eager-e60bdbfb27: ``v5 = torch.mul(x0, x1, out=x0)`` then the
    launch on ``(v5, x0)``; the bug needs only the launch on one tensor twice."""
    p = _e60()
    launch = p.body[1]

    def twice(q: Program) -> dict:  # one tensor: the same storage and layout (v5 is x0)
        steps = infer(q).steps
        hit = any(s.op.op == launch.op and s.args[0] == s.args[1] for s in steps)
        return dict(BAD) if hit else dict(OK)

    assert twice(p) == BAD
    small, out, spent = shrink(p, twice(p), twice, budget=40)
    assert small.body == (Op(launch.op, ("x0", "x0"), launch.params, ()),)
    assert same_failure(BAD, out) and spent <= 10
    assert needed_features(small) == {"op_kinds": ["triton"], "input_features": []}


def _aliased_and_added() -> Program:
    p = _aliased_program()
    return p.with_body(p.body + (Op("add_", ("x0", "y"), {}, ("v2",)),), ("v1", "v2"))


@pytest.mark.parametrize("needs_alias", [False, True])
def test_input_moves_undo_what_the_failure_does_not_need(needs_alias):
    p = _aliased_and_added()

    def evaluate(q: Program) -> dict:
        shared = len({t.storage for t in q.inputs}) < len(q.inputs)
        hit = any(op.op == "add_" for op in q.body) and (shared or not needs_alias)
        return dict(BAD) if hit else dict(OK)

    small, _, _ = shrink(p, evaluate(p), evaluate, budget=60)
    assert [op.op for op in small.body] == ["add_"] and small.outputs == ()
    want = ["aliased-inputs", "strided-inputs"] if needs_alias else []
    assert needed_features(small)["input_features"] == want
    if needs_alias:  # x1 keeps s0 and its layout: densifying it would un-alias it
        assert small.inputs[1] == p.inputs[1]
    else:  # add_(x0, y) does not name x1: it is dropped; the others keep their values
        assert [t.name for t in small.inputs] == ["x0", "y"]
        before = dict(zip([t.name for t in p.inputs], _values(p), strict=True))
        assert all(torch.equal(before[t.name], v)
                   for t, v in zip(small.inputs, _values(small), strict=True))


class NeedsAliasedAdd:
    """A stub ``evaluate``: the failure needs an ``add_`` and two inputs on one storage."""

    def __init__(self):
        self.calls = []

    def __call__(self, q: Program) -> dict:
        self.calls.append(q.dumps())
        shared = len({t.storage for t in q.inputs}) < len(q.inputs)
        hit = shared and any(op.op == "add_" for op in q.body)
        return dict(BAD) if hit else dict(OK)


def test_shrinking_with_every_move_is_deterministic():
    p = _aliased_and_added()
    runs = []
    for _ in range(2):
        need = NeedsAliasedAdd()
        small, _, spent = shrink(p, dict(BAD), need, budget=200)
        runs.append((small.dumps(), spent, need.calls))
    assert runs[0] == runs[1]
    assert len(set(runs[0][2])) == len(runs[0][2]) > 5  # it searched, each candidate once


@pytest.mark.parametrize("budget", [2, 4, 8])
def test_budget_bounds_the_executions_of_every_move(budget):
    p = _aliased_and_added()
    need = NeedsAliasedAdd()
    small, out, spent = shrink(p, dict(BAD), need, budget=budget)
    assert spent == len(need.calls) <= budget
    assert same_failure(BAD, out) and NeedsAliasedAdd()(small) == BAD
    assert spent < shrink(p, dict(BAD), NeedsAliasedAdd(), budget=200)[2]


# -- canonical rewrites ------------------------------------------------------------------
def _writes_program() -> Program:
    """One write of each kind, a producer bypass cannot replace, and two canonical forms.

    ``x`` (4, 4) float32, ``k`` (4,) int64, ``b`` (4,) bool, ``a`` (4, 3), ``w`` (3, 4)."""
    p = Program(
        (_f32("s0", 16, 1), StorageSpec("s1", 4, "int64"), StorageSpec("s2", 4, "bool"),
         _f32("s3", 12, 2), _f32("s4", 12, 3)),
        (
            TensorSpec("x", "s0", (4, 4), (4, 1)),
            TensorSpec("k", "s1", (4,), (1,)),
            TensorSpec("b", "s2", (4,), (1,)),
            TensorSpec("a", "s3", (4, 3), (3, 1)),
            TensorSpec("w", "s4", (3, 4), (4, 1)),
        ),
        (
            Op("addcmul_", ("x", "x", "x"), {"value": 1}, ("v0",)),  # 0: inplace, binds x
            Op("add.out", ("k", "k", "k"), {}, ("v1",)),  # 1: out= into an int64 k
            Op("fz.add_one_", ("v0",), {}, ()),  # 2: mutating custom op, binds nothing
            Op("tk.scale_", ("v0",), {"grid": [1], "BLOCK": 16, "n": 16, "alpha": 2.0}, ()),  # 3
            Op("tk.scale_then_shift", ("x", "x"), {"grid": [1], "BLOCK": 16}, ()),  # 4: two
            Op("setitem.Scalar", ("b",), {"idx": [0], "value": True}, ()),  # 5: bool
            Op("matmul", ("a", "w"), {}, ("m",)),  # 6: (4, 4), like no argument
            Op("sin", ("x",), {}, ("s",)),  # 7: bypassable
            Op("add_.Scalar", ("m",), {"other": 2.0}, ("v2",)),  # 8: canonical already
            Op("clone", ("a",), {}, ("c",)),  # 9: canonical already
            Op("zeros", ("a",), {"shape": [2], "dtype": "int64"}, ("z",)),  # 10: factory
            Op("sum", ("k",), {"dim": 0}, ("t",)),  # 11: int64 (), no same-dtype clone shape
            Op("mean", ("x",), {"dim": 0}, ("r",)),  # 12: (4,) float32, shape of no argument
        ),
        ("v1", "v2", "c", "s", "z", "t", "r"),
    )
    p.validate()
    return p


def test_canonical_forms_of_each_write_and_producer():
    p = _writes_program()
    forms = canonical_forms(p)
    assert forms[0] == {CANONICAL_WRITE: Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",))}
    # out=: the written argument is the out tensor; an integer dtype gets an integer scalar
    assert forms[1] == {CANONICAL_WRITE: Op("add_.Scalar", ("k",), {"other": 1}, ("v1",))}
    # a write binding nothing binds a fresh name, unused, unique in the program
    assert forms[2] == {CANONICAL_WRITE: Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v0_w",))}
    assert forms[3] == {CANONICAL_WRITE: Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v0_w_1",))}
    assert forms[4] == {}  # a launch writing two argument positions (one tensor twice)
    assert forms[5] == {}  # bool: no add_ scalar is valid
    assert forms[6] == {
        CANONICAL_CLONE: Op("clone", ("a",), {}, ("m",)),
        CANONICAL_FACTORY: Op("zeros", ("a",), {"shape": [4, 4], "dtype": "float32"}, ("m",)),
    }
    assert forms[7] == {}  # bypass replaces it
    assert forms[8] == forms[9] == forms[10] == {}  # canonical already
    assert forms[11] == {
        CANONICAL_CLONE: Op("clone", ("k",), {}, ("t",)),
        CANONICAL_FACTORY: Op("zeros", ("k",), {"shape": [], "dtype": "int64"}, ("t",)),
    }
    assert forms[12][CANONICAL_CLONE] == Op("clone", ("x",), {}, ("r",))
    opts = statement_options(bypass_targets(p), forms)
    assert opts[0] == (DROP, BYPASS, CANONICAL_WRITE, KEEP)
    assert opts[2] == (DROP, CANONICAL_WRITE, KEEP)  # binds nothing: bypass is drop
    assert opts[4] == opts[5] == (DROP, KEEP)
    assert opts[6] == (DROP, CANONICAL_CLONE, CANONICAL_FACTORY, KEEP)
    assert opts[7] == (DROP, BYPASS, KEEP)


def test_a_canonical_write_keeps_its_users_reading_the_written_tensor():
    p = _writes_program()
    acts = [KEEP] * len(p.body)
    acts[0] = CANONICAL_WRITE  # v0 = x.add_(1.0): v0 is x, as it was
    acts[1] = CANONICAL_WRITE
    acts[2] = CANONICAL_WRITE
    r = reduce_program(p, acts, [True] * len(p.outputs))
    r.validate()
    assert _rows(r)[:3] == [
        ("add_.Scalar", ("x",), ("v0",)),
        ("add_.Scalar", ("k",), ("v1",)),
        ("add_.Scalar", ("v0",), ("v0_w",)),
    ]
    assert r.body[3:] == p.body[3:] and r.outputs == p.outputs
    typed = infer(r)
    assert typed.values["v0"] == typed.values["x"] and typed.values["v1"] == typed.values["k"]
    # a rewrite after a bypass reads the renamed argument: v0 -> x
    acts = [KEEP] * len(p.body)
    acts[0], acts[3] = BYPASS, CANONICAL_WRITE
    r = reduce_program(p, acts, [True] * len(p.outputs))
    assert ("add_.Scalar", ("x",), ("v0_w_1",)) in _rows(r)
    assert ("fz.add_one_", ("x",), ()) in _rows(r)
    with pytest.raises(ValueError, match="statement 4 .tk.scale_then_shift. has no canonical-write"):
        reduce_program(p, [KEEP] * 4 + [CANONICAL_WRITE] + [KEEP] * 8, [True] * 7)


def test_a_canonical_producer_keeps_its_name_and_its_users():
    p = _writes_program()
    acts = [KEEP] * len(p.body)
    acts[6] = CANONICAL_FACTORY  # m = zeros([4, 4]): add_.Scalar(m) still reads a (4, 4) m
    r = reduce_program(p, acts, [True] * len(p.outputs))
    r.validate()
    assert r.body[6] == Op("zeros", ("a",), {"shape": [4, 4], "dtype": "float32"}, ("m",))
    assert needed_features(r)["op_kinds"] == [
        "custom", "factory", "functional", "inplace", "out", "triton"
    ]
    acts[6] = CANONICAL_CLONE  # m = a.clone(): (4, 3), and add_.Scalar takes any shape
    r = reduce_program(p, acts, [True] * len(p.outputs))
    assert is_valid(r) and infer(r).values["m"].shape == (4, 3)


def _matmul_feeds_add() -> Program:
    """``m = a @ w`` (4, 4) from (4, 3) and (3, 4), then ``v = x.add_(m)``: clone(a) is (4, 3),
    which does not broadcast to x, so the clone rewrite does not validate; zeros does."""
    p = Program(
        (_f32("s0", 16, 1), _f32("s3", 12, 2), _f32("s4", 12, 3)),
        (
            TensorSpec("x", "s0", (4, 4), (4, 1)),
            TensorSpec("a", "s3", (4, 3), (3, 1)),
            TensorSpec("w", "s4", (3, 4), (4, 1)),
        ),
        (Op("matmul", ("a", "w"), {}, ("m",)), Op("add_", ("x", "m"), {}, ("v",))),
        ("v",),
    )
    p.validate()
    return p


def test_invalid_rewrites_are_rejected_and_never_run():
    p = _matmul_feeds_add()
    assert not is_valid(reduce_program(p, [CANONICAL_CLONE, KEEP], [True]))
    assert is_valid(reduce_program(p, [CANONICAL_FACTORY, KEEP], [True]))
    calls = []

    def evaluate(q: Program) -> dict:  # the failure needs x.add_(m) with m a fresh (4, 4)
        calls.append(q)
        hit = any(op.op == "add_" and op.args == ("x", "m") for op in q.body)
        return dict(BAD) if hit else dict(OK)

    small, _, _ = shrink(p, evaluate(p), evaluate, budget=40)
    assert all(is_valid(q) for q in calls)
    assert [op.op for op in small.body] == ["zeros", "add_"]
    assert needed_features(small)["op_kinds"] == ["factory", "inplace"]


class NeedsWriteTo:
    """A stub ``evaluate``: the failure needs some write into ``d`` (a dropout of ``x``)."""

    def __init__(self):
        self.calls = []

    def __call__(self, q: Program) -> dict:
        self.calls.append(q.dumps())
        steps = infer(q).steps
        d = next((s.outs[0] for s in steps if s.op.op == "dropout_eval"), None)
        hit = d is not None and any(
            s.opdef.written(s.args, s.op.params) and d in s.opdef.written(s.args, s.op.params)
            for s in steps
        )
        return dict(BAD) if hit else dict(OK)


def _dropout_then(write: Op, *more: Op, outputs=("e",), matmul_inputs=False) -> Program:
    """``e = sin(y); d = dropout(x, training=False)``, then ``write`` into ``d`` and ``more``
    (with ``matmul_inputs``, two more inputs ``a`` (4, 3) and ``w`` (3, 4))."""
    storages, inputs = (_f32("s0", 16, 1), _f32("s1", 16, 2)), (
        TensorSpec("x", "s0", (4, 4), (4, 1)),
        TensorSpec("y", "s1", (4, 4), (4, 1)),
    )
    if matmul_inputs:
        storages += (_f32("s3", 12, 3), _f32("s4", 12, 4))
        inputs += (TensorSpec("a", "s3", (4, 3), (3, 1)), TensorSpec("w", "s4", (3, 4), (4, 1)))
    p = Program(
        storages,
        inputs,
        (Op("sin", ("y",), {}, ("e",)), Op("dropout_eval", ("x",), {"p": 0.5}, ("d",)), write, *more),
        outputs,
    )
    p.validate()
    return p


#: The writes the campaign's PyTorch #195422 entries kept (each through dropout's result).
DROPOUT_WRITES = {
    "custom": lambda: _dropout_then(Op("fz.add_one_", ("d",), {}, ())),
    "out": lambda: _dropout_then(Op("add.out", ("y", "y", "d"), {}, ("v",)), outputs=("v",)),
    "inplace": lambda: _dropout_then(
        Op("addcmul_", ("d", "y", "e"), {"value": 1}, ("v",)), outputs=("v", "e")
    ),
    "triton": lambda: _dropout_then(
        Op("tk.scale_", ("d",), {"grid": [1], "BLOCK": 16, "n": 16, "alpha": 2.0}, ())
    ),
}


@pytest.mark.parametrize("kind", list(DROPOUT_WRITES))
def test_keep_everything_replays_programs_with_rewrites(kind):
    from hypothesis.internal.conjecture.data import ConjectureData

    p = DROPOUT_WRITES[kind]()
    choices = keep_everything(p)
    # per node: a two-way node one boolean; a node of n options n - 1 booleans
    n_options = [len(o) for _, o in shrink_mod._plan(p).nodes]
    assert choices == [True] * sum(n - 1 for n in n_options)
    assert any(n > 2 for n in n_options)  # the write has a rewrite
    data = ConjectureData.for_choices(choices)
    assert data.draw(reductions(p)) == p and data.choices == tuple(choices)
    plan = shrink_mod._plan(p, encoding="integers")
    data = ConjectureData.for_choices(plan.keep_everything())
    assert data.draw(shrink_mod._strategy(p, plan)) == p


def test_keep_everything_of_a_program_with_rewrites_is_pinned():
    """The exact sequence of one program: inputs' layouts (none move), outputs, then the
    statements last to first (``hypothesis`` replays it byte for byte)."""
    p = DROPOUT_WRITES["out"]()
    assert [name for name, _ in shrink_mod._plan(p).nodes] == [
        ("input", "x"), ("input", "y"), ("output", 0), ("statement", 2), ("statement", 1),
        ("statement", 0),
    ]
    # inputs x, y: dropped if unused or not; v = add.out(y, y, out=d): drop, bypass,
    # rewrite, keep; dropout: drop, bypass, keep; sin(y), read by nothing: drop, bypass,
    # rewrite (clone of y), keep
    assert keep_everything(p) == [True] * 11
    assert shrink_mod._plan(p, encoding="integers").keep_everything() == [True, True, True, 3, 2, 3]


@pytest.mark.parametrize("kind", list(DROPOUT_WRITES))
def test_every_write_kind_shrinks_to_the_canonical_write(kind):
    p = DROPOUT_WRITES[kind]()
    need = NeedsWriteTo()
    small, _, _ = shrink(p, need(p), need, budget=40)
    assert [op.op for op in small.body] == ["dropout_eval", "add_.Scalar"]
    assert needed_features(small) == {"op_kinds": ["inplace", "view"], "input_features": []}
    # without the rewrite, the kind of the write stays (the split this move removes)
    plan = shrink_mod._plan(p, canonical=False)
    strategy = shrink_mod._strategy(p, plan)
    old, _, _ = shrink_mod._minimize(p, need(p), NeedsWriteTo(), 40, strategy, plan.keep_everything())
    assert p.body[2].op in [op.op for op in old.body]
    assert kind in needed_features(old)["op_kinds"]


def test_shrinking_with_rewrites_is_deterministic():
    p = DROPOUT_WRITES["inplace"]()
    runs = []
    for _ in range(2):
        need = NeedsWriteTo()
        small, _, spent = shrink(p, dict(BAD), need, budget=200)
        runs.append((small.dumps(), spent, need.calls))
    assert runs[0] == runs[1]
    assert len(set(runs[0][2])) == len(runs[0][2]) > 3


def test_the_dropout_bug_gives_one_feature_set_whatever_the_write():
    """PyTorch #195422 (eval-mode dropout decomposed to a clone: a write through its result
    is lost) judged for real on ``aot_eager``, through each kind of write and through a
    write that reads a ``matmul``: every one shrinks to the same needed features."""
    from aliasfuzz.campaign import _judge

    def evaluate(q: Program) -> dict:
        return _judge.evaluate(q, "aot_eager", "cpu")

    mm = _dropout_then(
        Op("matmul", ("a", "w"), {}, ("m",)),
        Op("add_", ("d", "m"), {}, ("v",)),
        outputs=("v",),
        matmul_inputs=True,
    )
    programs = [make() for make in DROPOUT_WRITES.values()] + [mm]
    features = []
    for p in programs:
        out = evaluate(p)
        assert out["verdict"] == "miscompile", out["explanation"]
        small, small_out, _ = shrink(p, out, evaluate, budget=40)
        assert same_failure(out, small_out)
        features.append(needed_features(small))
    assert features == [{"op_kinds": ["inplace", "view"], "input_features": []}] * len(programs)


def test_an_unused_input_is_dropped_unless_the_failure_needs_it():
    # _aliased_program: x1 shares x0's storage, y has its own; only x0 and y are named
    p = _aliased_and_added().with_body((Op("add_", ("x0", "y"), {}, ("v2",)),), ("v2",))
    r = reduce_inputs(p, {}, drop_unused=("x0", "x1"))  # x0 is named: kept
    assert [t.name for t in r.inputs] == ["x0", "y"] and r.body == p.body
    assert [s.name for s in r.storages] == ["s0", "s1"]
    r.validate()
    q = p.with_body((Op("zeros", ("x0",), {"size": [2]}, ("z",)),), ("z",))
    assert [t.name for t in reduce_inputs(q, {}, drop_unused=("x1", "y")).inputs] == ["x0"]
    # the last live input stays, even unused
    assert len(reduce_inputs(q.with_body((), ()), {}, drop_unused=("x0", "x1", "y")).inputs) == 1

    def aliased(q: Program) -> dict:  # fails only while x1 still aliases x0, unused or not
        shared = len({t.storage for t in q.inputs}) < len(q.inputs)
        return dict(BAD) if any(op.op == "add_" for op in q.body) and shared else dict(OK)

    small, _, _ = shrink(p, aliased(p), aliased, budget=60)
    assert [t.name for t in small.inputs] == ["x0", "x1", "y"]
    assert "aliased-inputs" in needed_features(small)["input_features"]

    def plain(q: Program) -> dict:
        return dict(BAD) if any(op.op == "add_" for op in q.body) else dict(OK)

    small, _, _ = shrink(p, plain(p), plain, budget=60)
    assert [t.name for t in small.inputs] == ["x0", "y"]


def test_a_scatter_over_its_whole_input_shrinks_to_a_clone_of_it():
    # eleventh audit wave D, 2be6c01096: the bug needs a fresh tensor equal to x0 (the
    # reinplace pass later writes it into x0); slice_scatter(x0, x0) over all of x0 is that
    # tensor, and bypassing it would make it x0 itself: the minimized program says clone
    p = Program((StorageSpec("s0", 3),), (TensorSpec("x0", "s0", (3,), (1,)),),
                (Op("slice_scatter", ("x0", "x0"), {"dim": 0, "start": 0, "end": 3, "step": 1},
                    ("v0",)),
                 Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",))), ("v0",))
    need = Needs([p.body[1]])
    small, _, _ = shrink(p, need(p), need, budget=50)
    assert _rows(small) == [("clone", ("x0",), ("v0",)), ("add_.Scalar", ("v0",), ("v1",))]


@pytest.mark.parametrize("needs_dynamic", [False, True])
def test_a_program_compiled_with_dynamic_shapes_keeps_them_only_when_its_failure_needs_them(
        needs_dynamic):
    # audit 36: 502df9d4e6 was filed (and its repro compiled) with dynamic=True, not needed
    base = _aliased_and_added()
    p = Program(base.storages, base.inputs, base.body, base.outputs, {"dynamic": True})

    def evaluate(q: Program) -> dict:
        hit = any(op.op == "add_" for op in q.body) and (q.meta.get("dynamic") or not needs_dynamic)
        return dict(BAD) if hit else dict(OK)

    small, _, _ = shrink(p, evaluate(p), evaluate, budget=60)
    assert [op.op for op in small.body] == ["add_"]
    assert bool(small.meta.get("dynamic")) is needs_dynamic
    assert keep_everything(p) == [True] + keep_everything(base)  # the node comes first
    # a crash keeps its shapes: another crash would pass for it (same_failure)
    crash = {"verdict": "crash", "check": "exceptions", "explanation": "boom"}
    small, _, _ = shrink(p, crash, lambda q: dict(crash), budget=60)
    assert small.meta.get("dynamic") is True


def test_an_input_s_own_storage_name_does_not_repeat_its_suffix():
    # fresh user 49's B12: a mutant of a shrunk program (storage s0_x0) densified again
    # named its storage s0_x0_x0
    x = TensorSpec("x0", "s0_x0", (3, 4), (1, 5), 2)
    p = Program((_f32("s0_x0", 20, 3),), (x,), (Op("clone", ("x0",), {}, ("c",)),), ("c",))
    r = reduce_inputs(p, {"x0": DENSE})
    r.validate()
    assert [s.name for s in r.storages] == ["s0_x0_1"], r.storages


#: Group A of the H100 campaign of 2026-12-06: x0 and x1 on one storage, x2 on another.
_ALIASED = ((StorageSpec("s0", 17), StorageSpec("s1", 2)),
            (TensorSpec("x0", "s0", (4,), (2,), 1), TensorSpec("x1", "s0", (1,), (1,), 2),
             TensorSpec("x2", "s1", (2,), (1,))))
_WRITE_X0 = Op("add_.Scalar", ("x0",), {"other": 1.0}, ("v0",))


def _needs_x1_read(c: Program) -> dict:
    """A stub ``evaluate``: the failure needs the write into x0 and a read of x1, still x0's
    alias (what keeps it a graph input)."""
    on = {t.name: t.storage for t in c.inputs}
    reads = any("x1" in op.args for op in c.body) and on.get("x1", 0) == on.get("x0")
    return dict(BAD) if _WRITE_X0 in c.body and reads else dict(OK)


def test_a_statement_read_by_nothing_shrinks_to_a_clone_of_the_alias_it_keeps_live():
    # H100 campaign of 2026-12-06 (15b880eb65, 526633d350, 58917cdc15): one bug needing the
    # second alias of x0 as a graph input, kept by a dead movedim, clone or slice_scatter
    storages, (x0, x1, x2) = _ALIASED
    write = _WRITE_X0
    for dead in (Op("movedim", ("x1",), {"source": 0, "destination": 0}, ("v3",)),
                 Op("slice_scatter", ("x2", "x1"), {"dim": 0, "start": 0, "end": 1, "step": 2},
                    ("v3",))):
        p = Program(storages, (x0, x1, x2), (write, dead), ("v0",))
        assert canonical_forms(p)[1] == {CANONICAL_CLONE: Op("clone", ("x1",), {}, ("v3",))}
        small, _, _ = shrink(p, _needs_x1_read(p), _needs_x1_read, budget=60)
        assert _rows(small) == [("add_.Scalar", ("x0",), ("v0",)), ("clone", ("x1",), ("v3",))]
    # a statement something reads keeps its own forms (movedim: none but its bypass)
    used = Program(storages, (x0, x1, x2),
                   (write, Op("movedim", ("x1",), {"source": 0, "destination": 0}, ("v3",))),
                   ("v0", "v3"))
    assert canonical_forms(used)[1] == {}


def test_a_statement_whose_readers_were_dropped_is_shrunk_again_as_a_dead_reader():
    # 58917cdc15's shape: the slice_scatter of the second alias had a reader in the program
    # as found; with it dropped, a second pass offers the scatter's dead-reader clone
    storages, (x0, x1, x2) = _ALIASED
    write = _WRITE_X0
    scatter = Op("slice_scatter", ("x2", "x1"), {"dim": 0, "start": 0, "end": 1, "step": 2},
                 ("v3",))
    p = Program(storages, (x0, x1, x2), (write, scatter, Op("sin", ("v3",), {}, ("v4",))), ("v0",))
    # as found, only sin's result is read by nothing: the scatter keeps its own form
    assert canonical_forms(p)[2] == {CANONICAL_CLONE: Op("clone", ("v3",), {}, ("v4",))}
    assert canonical_forms(p)[1] == {CANONICAL_CLONE: Op("clone", ("x2",), {}, ("v3",))}
    small, _, spent = shrink(p, _needs_x1_read(p), _needs_x1_read, budget=60)
    assert _rows(small) == [("add_.Scalar", ("x0",), ("v0",)), ("clone", ("x1",), ("v3",))]
    assert spent <= 60
    # with the budget spent by the first pass there is no second one
    first, _, spent = shrink(p, _needs_x1_read(p), _needs_x1_read, budget=4)
    assert spent == 4 and ("slice_scatter", ("x2", "x1"), ("v3",)) in _rows(first)


def test_a_result_only_rebound_by_set_shrinks_to_zeros():
    # d5ef3de698 and fcdf9afc52 (every campaign since the 34th): x.add_(1), then a clone or
    # an unbind row of x rebound to x by set_ and returned: one bug, two entries
    s = StorageSpec("s1", 6)
    x = TensorSpec("x1", "s1", (2, 1), (1, 2))
    write = Op("add_.Scalar", ("x1",), {"other": 1.0}, ("v0",))
    rebind = Op("set_", ("v1", "x1"), {}, ("v4",))
    clone = Program((s,), (x,), (write, Op("clone", ("v0",), {}, ("v1",)), rebind), ("v4",))
    row = Program((s,), (x,), (write, Op("unbind", ("v0",), {"dim": 1}, ("v1",)), rebind),
                  ("v4",))
    for p, shape in ((clone, [2, 1]), (row, [2])):
        assert canonical_forms(p)[1] == {CANONICAL_FACTORY: Op(
            "zeros", ("v0",), {"shape": shape, "dtype": "float32"}, ("v1",))}
        def need(c: Program) -> dict:  # the write, and set_ rebinding a tensor of its own
            ops = {(op.op, op.args[0] if op.args else None) for op in c.body}
            return dict(BAD) if {("add_.Scalar", "x1"), ("set_", "v1")} <= ops else dict(OK)

        small, _, _ = shrink(p, need(p), need, budget=60)
        assert [op.op for op in small.body] == ["add_.Scalar", "zeros", "set_"]
    # read by anything else (here sin, before the rebinding), it keeps its own forms
    kept = Program((s,), (x,), (*clone.body[:2], Op("sin", ("v1",), {}, ("v9",)), rebind),
                   ("v4", "v9"))
    assert canonical_forms(kept)[1] == {}


def test_a_launch_writing_two_tensors_shrinks_to_a_custom_op_that_runs_on_cpu():
    # audit 51, ecaa4998b9: the scheduler's KeyError 'op3' needed a kernel writing x1 and a
    # temporary, not Triton; found on CPU, its repro asked for a GPU
    import json

    from aliasfuzz.campaign import _judge

    p = Program.from_json(json.loads(
        (ROOT / "tests" / "data" / "blame" / "crash-lowering-ecaa4998b9.json").read_text()))
    launch = p.body[-1]
    assert canonical_forms(p)[-1] == {
        CANONICAL_WRITE: Op("fz.bump_pair", launch.args, {}, ())}
    # one tensor given twice is the kernel's own case (#196657): no rewrite
    twice = p.with_body(p.body[:-1] + (Op(launch.op, ("x1", "x1"), launch.params, ()),),
                        p.outputs)
    assert canonical_forms(twice)[-1] == {}
    opts = {"dynamic": True}
    out = _judge.evaluate(p, "inductor", "cpu", opts)
    assert out["verdict"] == "crash" and "KeyError: 'op3'" in out["explanation"], out
    small, got, _ = shrink(p, out, lambda c: _judge.evaluate(c, "inductor", "cpu", opts),
                           budget=20)
    assert "KeyError: 'op3'" in got["explanation"], got
    assert [op.op for op in small.body][-1] == "fz.bump_pair", small.body
    assert "triton" not in needed_features(small)["op_kinds"]


def test_a_custom_op_returning_a_fresh_tensor_shrinks_to_a_clone():
    # fresh users 51/52's B9: 20e6e2b026's Dynamo crash kept mylib::scaled, six lines of
    # noise in an upstream repro, where x0 * 2 (or a clone) reproduces it
    p = Program(
        (_f32("s0", 16, 1),),
        (TensorSpec("x", "s0", (4, 4), (4, 1)),),
        (Op("fz.scaled", ("x",), {}, ("v0",)), Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",))),
        ("v1",),
    )
    forms = canonical_forms(p)
    assert forms[0] == {CANONICAL_CLONE: Op("clone", ("x",), {}, ("v0",))}, forms
    assert CANONICAL_CLONE in statement_options(bypass_targets(p), forms)[0]
    small = reduce_program(p, [CANONICAL_CLONE, KEEP], [True])
    small.validate()
    assert _rows(small)[0] == ("clone", ("x",), ("v0",))
    # a mutating custom op keeps its canonical write, not a clone
    assert canonical_forms(_writes_program())[2] == {
        CANONICAL_WRITE: Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v0_w",))}
