"""Minimizing findings with Hypothesis's shrinker (``aliasfuzz.campaign.shrink``) and the
reduction moves it draws (``aliasfuzz.campaign.reduce``), driven by stub ``evaluate``
functions; shrinking through real workers is in ``tests/e2e``."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from aliasfuzz.campaign.reduce import (
    BYPASS,
    DENSE,
    DROP,
    KEEP,
    OWN_STORAGE,
    bypass_targets,
    dense_storages,
    input_options,
    needed_features,
    reduce_inputs,
)
from aliasfuzz.campaign.shrink import (
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
    return Program.loads((ROOT / "corpus/miscompile-aot_eager-e60bdbfb27/program.json").read_text())


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
    else:
        assert all(torch.equal(a, b) for a, b in zip(_values(p), _values(small), strict=True))


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
