"""Every registry row's written operands match its torch op's schema (alias annotations),
with the exceptions ``fuzz/ops/schema.py`` documents (NO_SCHEMA; ``writes`` narrowing)."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.fuzz.ops import REGISTRY
from aliasfuzz.fuzz.ops.core import OpKind
from aliasfuzz.fuzz.ops.schema import (
    NO_SCHEMA,
    SCHEMAS,
    bind,
    op_schema,
    schema_of,
    written_operands,
)

NAMES = sorted(REGISTRY)


def _arities(d):
    lo, hi = (d.arity, d.arity) if isinstance(d.arity, int) else d.arity
    if "pairs" in d.tags:  # two lists of equal length
        return range(lo + lo % 2, hi + 1, 2)
    return range(lo, hi + 1)


def _exempt(d) -> str | None:
    return NO_SCHEMA.get(d.name) or NO_SCHEMA.get(f"kind:{d.kind.value}")


@pytest.mark.parametrize("name", NAMES)
def test_row_written_operands_match_its_schema(name):
    d = REGISTRY[name]
    if schema_of(d) is None:
        assert _exempt(d), f"{name}: neither a schema in SCHEMAS nor a reason in NO_SCHEMA"
        for n in _arities(d):
            assert written_operands(d, n) == d.mutated_indices(n)
        return
    assert not _exempt(d), f"{name} has a schema and is also listed in NO_SCHEMA"
    for n in _arities(d):
        args = bind(d, n)
        assert len(args) == n
        from_schema = tuple(i for i, a in enumerate(args) if a.alias_info is not None and a.alias_info.is_write)
        assert from_schema == d.mutated_indices(n), (name, n, str(op_schema(schema_of(d)[0])))
        assert written_operands(d, n) == from_schema


def test_every_schema_entry_names_a_row():
    assert set(SCHEMAS) <= set(REGISTRY)
    assert {k for k in NO_SCHEMA if not k.startswith("kind:")} <= set(REGISTRY)


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].writes is not None])
def test_rows_that_narrow_writes_narrow_one_schema_operand_or_are_launches(name):
    # narrowing (setitem's view, index_put_'s rows, scatter_'s elements) stays inside the one
    # operand the schema writes; only Triton launches, whose writes are exact shadows, narrow
    # several operands
    d = REGISTRY[name]
    if d.kind is OpKind.TRITON:
        return
    for n in _arities(d):
        assert len(written_operands(d, n)) == 1, name


def test_custom_rows_read_the_registered_schema():
    # torch.library.custom_op turns mutates_args into Tensor(a!) annotations: bump_pair's two
    # mutable arguments get distinct alias sets
    s = op_schema("aliasfuzz::bump_pair")
    assert [a.alias_info.is_write for a in s.arguments] == [True, True]
    assert s.arguments[0].alias_info.before_set != s.arguments[1].alias_info.before_set
    assert written_operands(REGISTRY["fz.bump_pair"], 2) == (0, 1)


def test_list_arguments_take_every_remaining_row_argument():
    assert written_operands(REGISTRY["_foreach_add_.Scalar"], 3) == (0, 1, 2)  # Tensor(a!)[] self
    assert written_operands(REGISTRY["fz.pack_flat_"], 4) == (0,)  # (Tensor(a!) dst, Tensor[] parts)
    assert written_operands(REGISTRY["aminmax.out"], 3) == (1, 2)  # two out= tensors
    out = [a.name for a in bind(REGISTRY["index_put_.Tensor"], 4)]
    assert out == ["self", "values", "indices", "indices"]


def test_two_list_arguments_share_the_row_arguments_equally():
    d = REGISTRY["_foreach_add_.List"]
    assert [a.name for a in bind(d, 4)] == ["self", "self", "other", "other"]
    assert written_operands(d, 6) == (0, 1, 2) == d.mutated_indices(6)
    with pytest.raises(RuntimeError, match="do not fit"):
        bind(d, 3)


def test_unknown_schema_is_a_loud_registry_bug():
    with pytest.raises(RuntimeError, match="no torch operator"):
        op_schema("aten::no_such_op_")
    assert isinstance(op_schema("aten::copy_"), torch._C.FunctionSchema)
