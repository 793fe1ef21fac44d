"""The cost observation of Inductor's generated code (issue 14, passes/cost.py): the
loop-extent accounting follows what the generated loops touch, and every full ``inductor``
run records it in ``Execution.cost``."""

from __future__ import annotations

import torch

from aliasfuzz.passes import run_function
from aliasfuzz.passes.cost import inductor_cost, total


def _graphs(fn, *args):
    torch._dynamo.reset()
    with inductor_cost() as graphs, torch._inductor.config.patch(force_disable_caches=True):
        torch.compile(fn, backend="inductor")(*args)
    assert graphs, "no graph was lowered"
    return graphs


def _view_add(x):
    x[0:2].add_(0.5)


def _aug_assign(x):
    x[0:2] += 0.5


def test_a_two_element_update_moves_two_elements_not_the_buffer():
    (g,) = _graphs(_view_add, torch.arange(3000.0))
    assert g.bytes == 2 * 2 * 4  # read and write 2 float32 elements
    assert g.inductor_bytes > 3000 * 4  # the trap: count_bytes charges all of x
    assert g.temporaries == ()


def test_augmented_setitem_rewrites_the_whole_input():
    (g,) = _graphs(_aug_assign, torch.arange(3000.0))
    assert g.bytes == 2 * 3000 * 4


def test_an_indexed_store_through_a_workspace_keeps_one_temporary():
    def f(field, rows, work):  # shared case c06
        torch.mul(field[rows], 0.5, out=work)
        field[rows] = work

    (g,) = _graphs(f, torch.arange(64.0).reshape(16, 4), torch.tensor([1, 5, 9]), torch.zeros(3, 4))
    assert [b for _, b in g.temporaries] == [3 * 4 * 4]
    # gather (rows 24 B, field rows 48 B, temp 48 B), then store (rows, temp, field rows, work)
    assert g.bytes == (24 + 48 + 48) + (24 + 48 + 48 + 48)


def test_every_inductor_run_records_its_cost():
    ex = run_function("inductor", _aug_assign, (torch.arange(100.0),), input_names=["x"])
    assert ex.ok and len(ex.cost) == 1
    assert total(ex.cost) == {"bytes": 800, "inductor_bytes": 800, "kernels": 1, "temporaries": 0,
                              "temporary_bytes": 0, "code_temporary_bytes": 0, "unmeasured": 0}
    fast = run_function("inductor-reinplace", _aug_assign, (torch.arange(100.0),), input_names=["x"])
    assert fast.cost == []  # no codegen, nothing to count
