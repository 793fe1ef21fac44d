"""Advanced indexing with index tensors that are program values: validation of their known
contents, and the generator that adds them (:mod:`aliasfuzz.fuzz._genadvindex`).

A generated statement must have one eager meaning (indices in range; distinct where a
write without ``accumulate`` would race), run the same under a second opinion (one thread,
deterministic algorithms), leave every other program of a seed as it was, and shrink: the
shrinker's moves on it give programs that either fail validation or run.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import find, settings

from aliasfuzz.campaign.reduce import (
    BYPASS,
    CANONICAL,
    DROP,
    KEEP,
    bypass_targets,
    canonical_forms,
    reduce_inputs,
    reduce_program,
)
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz._genadvindex import ADV_ROWS
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.ops._advindex import INDEX_START
from aliasfuzz.fuzz.ops.core import NoEagerMeaning
from aliasfuzz.fuzz.sample import generate, generate_one
from aliasfuzz.fuzz.strategies import programs
from aliasfuzz.fuzz.validate import infer
from aliasfuzz.oracle.opinions import deterministic_one_thread

ADV = {r for r, _ in ADV_ROWS}


def _b20(rows, *body, rows_init="values"):
    args = {"data": list(rows)} if rows_init == "values" else {}
    storages = (
        StorageSpec("sx", 64, "float32"),
        StorageSpec("sr", len(rows), "int64", rows_init, args),
        StorageSpec("sv", 8, "float32"),
    )
    inputs = (
        TensorSpec("x", "sx", (16, 4), (4, 1)),
        TensorSpec("rows", "sr", (len(rows),), (1,)),
        TensorSpec("vals", "sv", (2, 4), (4, 1)),
    )
    return Program(storages, inputs, tuple(body), ())


def test_known_indices_out_of_range_are_refused():
    with pytest.raises(InvalidArgument, match="out of bounds for dimension 0 with size 16"):
        infer(_b20([0, 16], Op("setitem_tensor", ["x", "vals", "rows"])))
    infer(_b20([1, -16], Op("setitem_tensor", ["x", "vals", "rows"])))  # -16 wraps to 0


def test_known_repeated_indices_need_accumulate():
    with pytest.raises(NoEagerMeaning) as e:
        infer(_b20([3, 3], Op("setitem_tensor", ["x", "vals", "rows"])))
    assert e.value.rule == "duplicate-index-writes"
    with pytest.raises(NoEagerMeaning):  # -13 is 3 again
        infer(_b20([3, -13], Op("index_put_.Tensor", ["x", "vals", "rows"], {}, ["y"])))
    infer(_b20([3, 3], Op("index_put_.Tensor", ["x", "vals", "rows"], {"accumulate": True}, ["y"])))
    infer(_b20([3, 3], Op("getitem_tensor", ["x", "rows"], {}, ["g"])))  # a gather may repeat
    infer(_b20([3, 3], Op("setitem_tensor.Scalar", ["x", "rows"], {"value": 1.0})))  # one value


def test_contents_are_forgotten_once_written_and_unknown_inits_are_not_checked():
    # after rows += 20 validation no longer knows the contents: nothing is checked (as for
    # a computed index tensor), where the literal contents are refused
    infer(_b20([3, 3], Op("add_.Scalar", ["rows"], {"other": 20}, ["r"]),
               Op("setitem_tensor", ["x", "vals", "rows"])))
    # randint's contents need a torch generator: unknown, not checked
    infer(_b20([0, 0], Op("setitem_tensor", ["x", "vals", "rows"]), rows_init="randint"))
    with pytest.raises(NoEagerMeaning):  # zeros: known, both 0
        infer(_b20([0, 0], Op("setitem_tensor", ["x", "vals", "rows"]), rows_init="zeros"))
    infer(_b20([0, 0], Op("setitem_tensor", ["x", "vals", "rows"]), rows_init="arange"))  # 0, 1


def test_broadcast_index_tensors_are_checked_position_by_position():
    storages = (StorageSpec("sx", 12, "float32"), StorageSpec("si", 3, "int64", "values", {"data": [0, 1, 1]}))
    inputs = (TensorSpec("x", "sx", (3, 4), (4, 1)), TensorSpec("a", "si", (2, 1), (1, 1)),
              TensorSpec("b", "si", (2,), (1,), 1))
    ok = Program(storages, inputs, (Op("setitem_tensor.Scalar", ["x", "a", "b"], {"value": 2.0}),))
    infer(ok)  # positions (0,1) (0,1) (1,1) (1,1): repeats, one value: defined
    bad = ok.with_body((Op("index_put_.Tensor", ["x", "x", "a", "b"], {}, ["y"]),))
    with pytest.raises(InvalidArgument):  # values x overlap x itself
        infer(bad)


def _adv_programs(n: int, seed: int, **opts) -> list[Program]:
    return [p for p in generate(n, seed, advindex_share=1.0, **opts) if "advindex" in p.meta]


def _adv_steps(p: Program):
    return [s for s in infer(p).steps if s.op.op in ADV]


def _positions(p: Program, step) -> list[tuple[int, ...]]:
    data = {s.name: s.init_args["data"] for s in p.storages if s.init == "values"}
    specs = {t.name: t for t in p.inputs}
    metas = step.args[INDEX_START[step.op.op]:]
    idx = [torch.as_strided(torch.tensor(data[specs[a].storage]), specs[a].shape, specs[a].stride,
                            specs[a].offset) for a in step.op.args[INDEX_START[step.op.op]:]]
    b = torch.broadcast_tensors(*idx)
    sizes = step.args[0].shape
    assert all(m.dtype in ("int64", "int32") for m in metas)
    return [tuple(int(t.reshape(-1)[k]) % sizes[d] for d, t in enumerate(b)) for k in range(b[0].numel())]


def test_generated_statements_index_in_range_and_write_distinct_positions():
    progs = _adv_programs(80, 3, max_statements=4)
    assert len(progs) >= 60
    seen = set()
    for p in progs:
        for step in _adv_steps(p):
            seen.add(step.op.op)
            names = step.op.args[INDEX_START[step.op.op]:]
            assert all(n in {t.name for t in p.inputs} for n in names), "index tensors are inputs"
            pos = _positions(p, step)  # raises if an index is out of range for torch
            writes = step.op.op in ("setitem_tensor", "index_put_.Tensor")
            if writes and not step.op.params.get("accumulate", False):
                assert len(set(pos)) == len(pos), (step.op, p.dumps())
    assert seen == ADV


def _same(a, b) -> bool:
    if not isinstance(a, torch.Tensor):
        return a == b
    return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(
        a.double(), b.double(), rtol=1e-5, atol=1e-5, equal_nan=True)


def test_generated_programs_have_one_eager_meaning():
    """Each runs eagerly, and again under one thread and deterministic algorithms with the
    same outputs and inputs after the call (the campaign's second opinion)."""
    for p in _adv_programs(40, 5, max_statements=4)[:25]:
        first = run_eager(p)
        assert first.error is None, (first.error, p.dumps())
        with deterministic_one_thread():
            second = run_eager(p)
        assert second.error is None
        for a, b in itertools.chain(zip(first.outputs, second.outputs, strict=True),
                                    zip(first.inputs_after, second.inputs_after, strict=True)):
            assert _same(a, b), p.dumps()


def test_default_share_reaches_the_coverage_target_and_leaves_other_programs_alone():
    with_adv = generate(300, 0)
    without = generate(300, 0, advindex_share=0.0)
    hit = [i for i, p in enumerate(with_adv) if "advindex" in p.meta]
    assert len(hit) >= 0.02 * 300
    assert all(with_adv[i] == without[i] for i in range(300) if i not in hit)
    assert generate_one(0, hit[0]) == with_adv[hit[0]]  # deterministic per (seed, index)
    with pytest.raises(InvalidArgument, match="advindex_share"):
        generate(1, 0, advindex_share=1.5)
    # the family needs index inputs and a family of its rows
    assert not _adv_programs(20, 0, index_inputs=False)
    assert not _adv_programs(20, 0, families=("view", "custom"))


def _valid(p: Program) -> bool:
    try:
        infer(p)
    except InvalidArgument:
        return False
    return True


def test_shrinker_moves_on_the_statement_give_valid_runnable_programs():
    """Drop, bypass and the canonical rewrites of a generated advanced-indexing statement
    (the shrinker's per-statement moves) validate and run, and once the statement is dropped
    its index inputs can be dropped as unused."""
    checked = 0
    for p in _adv_programs(40, 9, max_statements=3)[:12]:
        targets, canon = bypass_targets(p), canonical_forms(p)
        for i, op in enumerate(p.body):
            if op.op not in ADV:
                continue
            moves = [DROP, *([BYPASS] if targets[i] else []), *[c for c in CANONICAL if c in canon[i]]]
            for move in moves:
                acts = [KEEP] * len(p.body)
                acts[i] = move
                q = reduce_program(p, acts, [True] * len(p.outputs), targets, canon)
                if move in (DROP, BYPASS) or op.op != "getitem_tensor":
                    assert _valid(q), (move, op, p.dumps())  # a write rewrites to add_ validly
                if _valid(q):
                    assert run_eager(q).error is None, (move, op, q.dumps())
                    checked += 1
            dropped = reduce_program(p, [KEEP if j != i else DROP for j in range(len(p.body))],
                                     [True] * len(p.outputs))
            idx = [a for a in op.args[INDEX_START[op.op]:] if not any(a in o.args for o in dropped.body)]
            if idx and len(dropped.inputs) > 1:
                small = reduce_inputs(dropped, {}, [], {}, idx)
                assert not set(idx) & {t.name for t in small.inputs} and _valid(small)
    assert checked >= 20


def test_hypothesis_shrinks_to_one_small_index_statement():
    small = find(
        programs(families=("inplace",), max_statements=2, advindex_share=1.0),
        lambda p: any(op.op == "setitem_tensor" for op in p.body),
        settings=settings(database=None, max_examples=300, derandomize=True),
    )
    step = next(s for s in infer(small).steps if s.op.op == "setitem_tensor")
    assert len(step.op.args) == 3  # one index tensor
    data = [s.init_args["data"] for s in small.storages if s.init == "values" and s.dtype == "int64"]
    assert data == [[0]]  # one index, shrunk to 0
