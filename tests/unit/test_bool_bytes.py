"""The ``bool-bytes`` rule: no dtype view between bool memory and another dtype.

A bool holds the byte 0 or 1. The ninth campaign's c4ca8b0e6d wrote 2 into bool memory
through ``x.view(torch.uint8).add_(1)``; eager kept the byte, compiled code wrote the value
back through a bool copy (1): a difference in undefined behaviour (its auditor: false
positive). The rule is decided by ``view_dtype``'s own ``infer``.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.ops.core import NoEagerMeaning
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.fuzz.validate import RULE_NAMES, infer


def _prog(dtype: str, view: str) -> Program:
    return Program(
        (StorageSpec("s0", 2, dtype, "zeros"),), (TensorSpec("x0", "s0", (2,), (1,), 0),),
        (Op("view_dtype", ("x0",), {"dtype": view}, ("v0",)),), ("v0",),
    )


@pytest.mark.parametrize(("dtype", "view"), [("bool", "uint8"), ("bool", "int8"), ("uint8", "bool"), ("int8", "bool")])
def test_a_view_between_bool_and_another_dtype_is_rejected(dtype, view):
    with pytest.raises(NoEagerMeaning) as e:
        infer(_prog(dtype, view))
    assert e.value.rule == "bool-bytes" and "bool-bytes" in RULE_NAMES


def test_other_views_of_one_item_size_stay_valid():
    assert infer(_prog("uint8", "int8")).values["v0"].dtype == "int8"
    assert infer(_prog("bool", "bool")).values["v0"].dtype == "bool"


def test_the_undefined_byte_is_what_eager_copies_normalise():
    # why the rule exists: eager's own clone of a bool holding 2 reads 1
    x = torch.zeros(2, dtype=torch.bool)
    x.view(torch.uint8).add_(2)
    assert x.view(torch.uint8).tolist() == [2, 2] and x.clone().view(torch.uint8).tolist() == [1, 1]


def test_generated_programs_never_view_bool_memory_as_bytes():
    for p in generate(300, 3, dtypes=("bool", "float32", "uint8")):
        typed = infer(p)
        for step in typed.steps:
            if step.op.op == "view_dtype":
                assert (step.args[0].dtype == "bool") == (step.outs[0].dtype == "bool"), p.dumps()
