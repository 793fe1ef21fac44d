"""Foreach list-list forms (``fuzz/ops/foreach.py``) against eager PyTorch.

Lists of distinct views of one base are exact; overlapping written entries are the general
``overlapping-writes`` rule, a read entry partially overlapping a written one the general
``partial-read-write-overlap``; a read entry that is another entry's written tensor (the
pairing only the row knows) is ``partial-read-write-overlap`` from the row. Generic per-row
checks (layouts, footprints, render vs apply, aliased arguments, TorchScript) run in
``test_registry.py``.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.validate import infer
from tests.common.validation import rejection_rule

# four disjoint quarters of one base of 16, and a view straddling the first two
_Q = tuple(TensorSpec(f"q{i}", "s", (4,), (1,), 4 * i) for i in range(4))
_MID = TensorSpec("mid", "s", (4,), (1,), 2)


_FLOATS = StorageSpec("s", 16)


def _program(op, args, params=None, inputs=(*_Q, _MID), storage=_FLOATS) -> Program:
    return Program((storage,), tuple(inputs), (Op(op, tuple(args), params or {}, ()),), ())


@pytest.mark.parametrize(("op", "params", "fn"), [
    ("_foreach_add_.List", {"alpha": 2.0}, lambda a, b: a + 2.0 * b),
    ("_foreach_mul_.List", {}, lambda a, b: a * b),
    ("_foreach_copy_", {}, lambda a, b: b),
    ("_foreach_lerp_.Scalar", {"weight": 0.25}, lambda a, b: a + 0.25 * (b - a)),
])
def test_lists_of_distinct_views_of_one_base_are_exact(op, params, fn):
    p = _program(op, ("q0", "q1", "q2", "q3"), params)
    infer(p)
    r = run_eager(p)
    assert r.error is None
    base = torch.arange(16.0)
    want = base.clone()
    want[0:4], want[4:8] = fn(base[0:4], base[8:12]), fn(base[4:8], base[12:16])
    after = dict(zip(("q0", "q1", "q2", "q3"), r.inputs_after[:4], strict=True))
    assert torch.allclose(torch.cat([after[f"q{i}"] for i in range(4)]), want)


def test_overlapping_written_entries_are_overlapping_writes():
    assert rejection_rule(_program("_foreach_add_.List", ("q0", "mid", "q2", "q3"))) == "overlapping-writes"


def test_a_read_entry_partially_overlapping_a_written_one_is_partial_read_write_overlap():
    assert rejection_rule(_program("_foreach_mul_.List", ("q0", "mid"))) == "partial-read-write-overlap"


def test_a_read_entry_that_is_another_entrys_written_tensor_is_rejected_by_the_row():
    # x_0 += x_1; x_1 += x_0: the slow path reads the new x_0, the fast path either
    p = _program("_foreach_add_.List", ("q0", "q1", "q1", "q0"))
    assert rejection_rule(p) == "partial-read-write-overlap"
    a, b = torch.arange(4.0), torch.arange(4.0, 8.0)
    torch._foreach_add_([a, b], [b, a])  # CPU: entry by entry
    assert torch.equal(b, torch.arange(4.0, 8.0) + a)  # entry 1 read entry 0's new value


def test_an_entry_read_and_written_whole_in_its_own_pair_is_defined():
    p = _program("_foreach_add_.List", ("q0", "q1", "q0", "q1"))
    infer(p)
    r = run_eager(p)
    assert torch.equal(torch.cat(r.inputs_after[:2]), 2 * torch.arange(8.0))


def test_lerp_of_integer_tensors_and_odd_argument_counts_are_refused():
    ints = StorageSpec("s", 16, "int64")
    with pytest.raises(InvalidArgument, match="floating"):
        infer(_program("_foreach_lerp_.Scalar", ("q0", "q1"), {"weight": 0.5}, storage=ints))
    with pytest.raises(RuntimeError):
        torch._foreach_lerp_([torch.zeros(2, dtype=torch.int64)], [torch.ones(2, dtype=torch.int64)], 0.5)
    with pytest.raises(InvalidArgument, match="two lists"):
        infer(_program("_foreach_copy_", ("q0", "q1", "q2")))
