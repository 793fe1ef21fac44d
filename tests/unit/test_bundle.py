"""Bundles (issue 16, :mod:`aliasfuzz.fuzz.bundle`): several programs as one, with disjoint
storages, the same values, and each member's share of a compile's cost."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.bundle import bundle, members_in, unbundle, unbundleable
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.sample import generate_one
from aliasfuzz.passes.cost import GraphCost, member_cost


def _bundleable(seed: int, n: int) -> list[Program]:
    got = [p for p in (generate_one(seed, i) for i in range(4 * n)) if unbundleable(p) is None]
    assert len(got) >= n
    return got[:n]


def _bare(p: Program) -> Program:
    return Program(p.storages, p.inputs, p.body, p.outputs)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and torch.equal(a.isnan(), b.isnan())
                and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)))
    return a == b


def test_a_bundle_is_valid_and_unbundles_to_its_members():
    members = _bundleable(7, 9)
    for k in range(0, 9, 3):
        b = bundle(members[k:k + 3])
        b.validate()
        assert b.meta["bundle"] == 3
        assert [_bare(m) for m in unbundle(b)] == [_bare(m) for m in members[k:k + 3]]
        assert not {s.name for s in b.storages} & {s.name for s in members[k].storages}


def test_a_bundle_computes_what_its_members_compute_one_after_the_other():
    members = [p for p in _bundleable(11, 12) if run_eager(p).error is None][:6]
    b = bundle(members)
    got = run_eager(b)
    assert got.error is None
    expected_out, expected_in = [], []
    for m in members:
        r = run_eager(m)
        expected_out += list(r.outputs)
        expected_in += list(r.inputs_after)
    assert len(got.outputs) == len(expected_out) and len(got.inputs_after) == len(expected_in)
    assert all(_same(x, y) for x, y in zip(got.outputs, expected_out, strict=True))
    assert all(_same(x, y) for x, y in zip(got.inputs_after, expected_in, strict=True))


def test_programs_that_cannot_be_bundled_are_refused_with_their_reason():
    plain = _bundleable(7, 1)[0]
    grad = Program(plain.storages, tuple(t.__class__(**{**t.__dict__, "requires_grad": True})
                                         for t in plain.inputs), plain.body, plain.outputs)
    dynamic = Program(plain.storages, plain.inputs, plain.body, plain.outputs, {"dynamic": True})
    assert unbundleable(grad) == "an input requires grad"
    assert unbundleable(dynamic) == "dynamic shapes"
    with pytest.raises(InvalidArgument, match="program 1 cannot be bundled: dynamic shapes"):
        bundle([plain, dynamic])
    with pytest.raises(InvalidArgument, match="at least two programs"):
        bundle([plain])
    with pytest.raises(InvalidArgument, match="not a bundle"):
        unbundle(plain)


def test_members_are_read_from_the_rendered_programs_lines_of_a_stack_trace():
    trace = ('  File "/tmp/_aliasfuzz_program_x.py", line 22, in program\n'
             '    b3_v6 = b3_v2.add_(0)\n            ^^^^^^^^^^^^^\n')
    assert members_in(trace) == {3}
    assert members_in('  File "/usr/lib/torch/_ops.py", line 1, in f\n    return self_._op(x)\n') == set()
    assert members_in(None) == set()


def test_a_members_cost_counts_its_own_nodes_and_every_unattributed_one():
    g = GraphCost(60, 3, (("op0", 10), ("op1", 20), ("op2", 30)), 0, (("buf1", 8),),
                  owners=(("op0", (0,)), ("op1", (1,)), ("buf1", (1,)), ("op2", ())))
    assert member_cost([g], 0) == {"bytes": 40, "inductor_bytes": 0, "kernels": 2,
                                   "temporaries": 0, "temporary_bytes": 0, "unmeasured": 0}
    assert member_cost([g], 1)["bytes"] == 50
    assert member_cost([g], 1)["temporary_bytes"] == 8
    assert member_cost([GraphCost(60, 3, (("op0", 60),))], 0) is None  # no owners: no share
