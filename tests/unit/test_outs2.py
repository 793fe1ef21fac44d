"""``out=`` forms beyond add/mul (``fuzz/ops/outs2.py``) against eager PyTorch.

``stack.out`` on built programs (the generic registry test rarely draws fitting shapes),
what ATen refuses (``cat.out`` / ``index_select.out`` into an ``out`` sharing memory with an
input), the TensorIterator rows' overlap rules (``out`` that is an input: defined; partial
overlap: ``partial-read-write-overlap``), and the two-output rows (``v`` is the ``out``
tensor, the indices are fresh ``int64``; ``sort`` is stable). Generic per-row checks run in
``test_registry.py``.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.validate import NoEagerMeaning, infer
from tests.unit.test_registry import check_exact


def _program(op, args, params, inputs, storages, n_out=1) -> Program:
    outs = tuple(f"r{i}" for i in range(n_out))
    return Program(tuple(storages), tuple(inputs), (Op(op, tuple(args), params, outs),), outs)


_S = (StorageSpec("s", 12), StorageSpec("so", 24, init="zeros"))


@pytest.mark.parametrize(("dim", "out_layout"), [
    (0, ((2, 3), (3, 1), 0)),
    (1, ((3, 2), (2, 1), 1)),
    (1, ((3, 2), (1, 3), 0)),  # out transposed: written through its own strides
])
def test_stack_out_is_exact(dim, out_layout):
    ins = (TensorSpec("a", "s", (3,), (1,), 0), TensorSpec("b", "s", (3,), (2,), 5),
           TensorSpec("o", "so", *out_layout))
    check_exact(_program("stack.out", ("a", "b", "o"), {"dim": dim}, ins, _S))


@pytest.mark.parametrize("op,params", [("cat.out", {"dim": 0}), ("index_select.out", {"dim": 0, "index": [1, 0]})])
def test_cat_and_index_select_into_an_out_sharing_an_input_are_refused_as_aten_does(op, params):
    ins = (TensorSpec("a", "s", (2,), (1,), 0), TensorSpec("o", "s", (2,), (1,), 1))
    args = ("a", "o")
    with pytest.raises(InvalidArgument, match="assert_no_overlap"):
        infer(_program(op, args, params, ins, _S))
    s = torch.arange(4.0)
    with pytest.raises(RuntimeError):
        if op == "cat.out":
            torch.cat([s[0:2]], 0, out=s[1:3])
        else:
            torch.index_select(s[0:2], 0, torch.tensor([1, 0]), out=s[1:3])


def test_where_out_that_is_an_input_is_exact_and_a_partial_overlap_is_rejected():
    ins = (TensorSpec("a", "s", (4,), (1,), 0), TensorSpec("b", "s", (4,), (1,), 4),
           TensorSpec("c", "s", (4,), (1,), 2))
    mask = {"mask": [True, False, True, False]}
    p = _program("where.out", ("a", "b", "a"), mask, ins, _S)
    infer(p)
    r = run_eager(p)
    assert r.outputs[0].tolist() == [0.0, 5.0, 2.0, 7.0]
    with pytest.raises(NoEagerMeaning) as e:
        infer(_program("where.out", ("a", "c", "a"), mask, ins, _S))
    assert e.value.rule == "partial-read-write-overlap"


def test_max_dim_out_writes_v_and_returns_fresh_int64_indices():
    ins = (TensorSpec("x", "s", (3, 4), (4, 1), 0), TensorSpec("v", "so", (3,), (2,), 1))
    p = _program("max.dim_max", ("x", "v"), {"dim": 1, "keepdim": False}, ins, _S, n_out=2)
    typed = infer(p)
    assert typed.values["r0"].storage == "so" and typed.values["r1"].dtype == "int64"
    check_exact(p)
    r = run_eager(p)
    assert r.outputs[0].tolist() == [3.0, 7.0, 11.0] and r.outputs[1].tolist() == [3, 3, 3]


def test_sort_out_is_stable_on_ties():
    ties = StorageSpec("s", 6, init="values", init_args={"data": [2.0, 1.0, 2.0, 1.0, 0.0, 2.0]})
    ins = (TensorSpec("x", "s", (6,), (1,), 0), TensorSpec("v", "so", (6,), (1,), 0))
    p = _program("sort.values_stable", ("x", "v"), {"dim": 0, "descending": True}, ins,
                 (ties, _S[1]), n_out=2)
    check_exact(p)
    assert run_eager(p).outputs[1].tolist() == [0, 2, 5, 1, 3, 4]


def test_sum_out_of_another_dtype_is_not_modelled():
    ins = (TensorSpec("x", "s", (3, 4), (4, 1), 0), TensorSpec("o", "i", (3,), (1,), 0))
    with pytest.raises(InvalidArgument, match="dtype"):
        infer(_program("sum.out", ("x", "o"), {"dim": 1}, ins, (_S[0], StorageSpec("i", 3, "int64"))))
