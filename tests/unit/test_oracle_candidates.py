"""Ground truth per reinplacing candidate on graphs traced by the ``inductor-reinplace``
pipeline: each rule of :mod:`aliasfuzz.oracle.candidates` on a function made to hit it,
and exactness (disjoint views of one storage are not conflicts)."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.oracle.candidates import SAFE, UNSAFE, candidates, ground_truth
from aliasfuzz.passes.pipelines import PipelineOptions, run_function


@torch.library.custom_op("aliasfuzz_test_oracle::rotate_into", mutates_args=("dst",))
def rotate_into(src: torch.Tensor, dst: torch.Tensor) -> None:
    n = src.shape[0]
    for i in range(n):
        dst[i] = src[(i + 1) % n]


@torch.library.custom_op("aliasfuzz_test_oracle::halve_", mutates_args=("t",))
def halve_(t: torch.Tensor) -> None:
    t.mul_(0.5)


def _truths(fn, *inputs, v2: bool = True):
    ex = run_function("inductor-reinplace", fn, inputs, options=PipelineOptions(auto_functionalized_v2=v2))
    assert ex.failure is None, ex.failure
    out = {}
    for gm in ex.extra["graphs_before"]:
        for c in candidates(gm.graph):
            out[(c.node, c.arg)] = ground_truth(gm.graph, c)
    decided = {(d.node, d.arg): d.reinplaced for d in ex.decisions}
    return out, decided


def _only(truths, kind):
    found = [t for t in truths.values() if t.candidate.kind == kind]
    assert len(found) == 1, truths
    return found[0]


def test_custom_op_on_input_row_with_epilogue_is_safe():
    def f(x):
        halve_(x[1])

    truths, _ = _truths(f, torch.arange(12.0).reshape(3, 4), v2=False)
    t = _only(truths, "auto_functionalized")
    assert t.status == SAFE, t


def test_later_reader_of_old_contents_is_unsafe_with_witness():
    def f(x, i, v):
        y = x * 2
        z = y.index_put((i,), v)
        return z, y

    truths, decided = _truths(f, torch.arange(4.0), torch.tensor([1]), torch.tensor([9.0]))
    t = _only(truths, "index_put")
    assert t.status == UNSAFE and t.witness.rule == 2
    assert t.witness.reader == "output"
    assert decided[(t.candidate.node, "self")] is False  # the pass agrees


def test_input_without_epilogue_is_unsafe():
    def f(x, i, v):
        return x.index_put((i,), v)

    truths, _ = _truths(f, torch.arange(4.0), torch.tensor([1]), torch.tensor([9.0]))
    t = _only(truths, "index_put")
    assert t.status == UNSAFE and t.witness.rule == 4


def test_result_clobbered_by_epilogue_is_unsafe():
    # PyTorch issue #198094 (case b03): the scatter result is returned, x is then zeroed.
    def f(x, rows):
        fresh = torch.slice_scatter(x, rows, dim=0, start=1, end=3)
        x.fill_(0.0)
        return fresh

    truths, decided = _truths(f, torch.arange(12.0).reshape(4, 3), -torch.ones(2, 3))
    t = _only(truths, "scatter")
    assert t.status == UNSAFE and t.witness.rule == 3
    assert t.witness.reader == "copy_"
    assert decided[(t.candidate.node, t.candidate.arg)] is True  # Inductor writes in place


def test_op_reading_its_own_destination_is_like_eager():
    def f(x):
        rotate_into(x, x)

    # eager passes x as both arguments: running the op in place on x is what eager does
    truths, _ = _truths(f, torch.arange(4.0))
    t = _only(truths, "auto_functionalized_v2")
    assert t.status == SAFE, t


@torch.library.custom_op("aliasfuzz_test_oracle::bump_pair", mutates_args=("p", "q"))
def bump_pair(p: torch.Tensor, q: torch.Tensor) -> None:
    p.add_(1.0)
    q.mul_(3.0)


def test_two_overlapping_mutated_arguments_are_unsafe():
    # v1 clones each mutated argument on its own (v2 would merge both into one base)
    def f(x):
        y = x * 1
        bump_pair(y[0:3], y[1:4])
        return y

    truths, _ = _truths(f, torch.arange(4.0), v2=False)
    args = [t for t in truths.values() if t.candidate.kind == "auto_functionalized"]
    assert len(args) == 2 and all(t.status == UNSAFE and t.witness.rule == 1 for t in args), truths


@pytest.mark.parametrize("read_row", [0, 1])
def test_disjoint_rows_of_one_storage_do_not_conflict(read_row):
    def f(x, i, v):
        y = x * 2
        r0 = y[0].index_put((i,), v)
        return r0, y[read_row] * 1

    truths, _ = _truths(f, torch.arange(6.0).reshape(2, 3), torch.tensor([1]), torch.tensor([9.0]))
    t = _only(truths, "index_put")
    # row 1 is another part of y's storage: exact overlap, not "same storage"
    assert t.status == (UNSAFE if read_row == 0 else SAFE), t


def _dyn_truths(fn, *inputs, v2: bool = True):
    ex = run_function(
        "inductor-reinplace", fn, inputs, options=PipelineOptions(dynamic=True, auto_functionalized_v2=v2)
    )
    assert ex.failure is None, ex.failure
    (gm,) = ex.extra["graphs_before"]
    return {(c.node, c.arg): ground_truth(gm.graph, c) for c in candidates(gm.graph)}


def test_dynamic_shapes_safe_is_proven_for_all_sizes():
    def f(x):
        halve_(x[1])

    truths = _dyn_truths(f, torch.arange(12.0).reshape(3, 4), v2=False)
    t = _only(truths, "auto_functionalized")
    assert t.status == SAFE and "all sizes" in t.reason, t


def test_dynamic_shapes_unsafe_has_a_witness_at_the_traced_sizes():
    def f(x, i, v):
        y = x * 2
        return y.index_put((i,), v), y

    truths = _dyn_truths(f, torch.arange(5.0), torch.tensor([1]), torch.tensor([9.0]))
    t = _only(truths, "index_put")
    assert t.status == UNSAFE and t.witness.rule == 2 and t.witness.reader == "output"


def test_result_of_each_mutated_argument_is_its_own_getitem():
    # bump_pair(p, q) on two disjoint inputs, both returned: each base's copy back is the
    # redundant one (getitem 1 for p, 2 for q), so neither is clobbered.
    def f(p, q):
        bump_pair(p, q)
        return p, q

    base = torch.arange(8.0)
    truths, _ = _truths(f, base[:4], base[4:])
    bases = [t for t in truths.values() if t.candidate.kind == "auto_functionalized_v2"]
    assert len(bases) == 2 and all(t.status == SAFE for t in bases), truths


def test_result_read_through_a_piece_of_unbind_is_still_the_result():
    def f(x, rows):
        fresh = torch.slice_scatter(x, rows, dim=0, start=1, end=3)
        x.fill_(0.0)
        return fresh.unbind(0)[1]

    truths, _ = _truths(f, torch.arange(12.0).reshape(4, 3), -torch.ones(2, 3))
    t = _only(truths, "scatter")
    assert t.status == UNSAFE and t.witness.rule == 3, t
