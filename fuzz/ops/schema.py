"""Which operands a statement writes, derived from the torch op's schema.

Each registry row is bound to the operator overload it calls (:data:`SCHEMAS`), and each of
the row's tensor arguments to a schema argument. An argument is *written* when its alias
annotation says so (``Tensor(a!)``, ``Tensor(a!)[]``, an ``out=`` argument: ``is_write`` on
``torch._C.Argument.alias_info``), as functionalization and ``SchemaCheckMode`` read it.
Custom ops (``fz.<op>``) are bound to their own registered schema ``aliasfuzz::<op>``
(``torch.library.custom_op`` derives ``Tensor(a!)`` from ``mutates_args``).

Rows with no single torch op behind them are listed in :data:`NO_SCHEMA` with the reason;
their written operands are the row's declared ``mutates``:

* Python compositions (basic indexing, control flow, a factory that only borrows a device,
  the ``None`` test of ``optional_add``);
* user Triton launches, whose writes are the exact per-launch footprints of their shadows
  (:mod:`._kernelgen`), not a schema.

Rows may narrow what they write inside a written operand (``OpDef.writes``: setitem's
indexed view, ``index_put_``'s rows, ``scatter_``'s elements); the operand written stays the
schema's. ``tests/unit/test_schema.py`` checks every row's ``mutates`` against this.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from aliasfuzz.fuzz.ops.autograd import GRAD, NO_GRAD, NO_GRAD_INNER
from aliasfuzz.fuzz.ops.core import OpDef, OpKind
from aliasfuzz.fuzz.ops.fallbacks import SCHEMAS as _FALLBACKS
from aliasfuzz.fuzz.ops.foreach import SCHEMAS as _FOREACH
from aliasfuzz.fuzz.ops.indexfam import SCHEMAS as _INDEX_FAMILY
from aliasfuzz.fuzz.ops.metadata import OPS as _METADATA
from aliasfuzz.fuzz.ops.outs2 import SCHEMAS as _OUTS2
from aliasfuzz.fuzz.ops.windows import SCHEMAS as _WINDOWS

__all__ = ["NO_SCHEMA", "SCHEMAS", "bind", "op_schema", "schema_of", "written_operands"]

#: row name -> (``namespace::op.overload``, schema argument names the row's tensor arguments
#: bind to, in order; None: the schema's tensor arguments in order). A list argument
#: (``Tensor[]``) takes every remaining row argument; several list arguments share them
#: equally (``_foreach_add_.List``: ``self`` then ``other``).
SCHEMAS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    # views
    "view": ("aten::view", None),
    "reshape": ("aten::reshape", None),
    "select": ("aten::select.int", None),
    "narrow": ("aten::narrow", None),
    "transpose": ("aten::transpose.int", None),
    "permute": ("aten::permute", None),
    "t": ("aten::t", None),
    "unsqueeze": ("aten::unsqueeze", None),
    "squeeze": ("aten::squeeze", None),
    "expand": ("aten::expand", None),
    "as_strided": ("aten::as_strided", None),
    "diagonal": ("aten::diagonal", None),
    "view_dtype": ("aten::view.dtype", None),
    "split": ("aten::split.Tensor", None),
    "chunk": ("aten::chunk", None),
    "unbind": ("aten::unbind.int", None),
    "dropout_eval": ("aten::dropout", None),
    # functional
    "add": ("aten::add.Tensor", None),
    "add.Scalar": ("aten::add.Scalar", None),
    "mul": ("aten::mul.Tensor", None),
    "mul.Scalar": ("aten::mul.Scalar", None),
    "sub": ("aten::sub.Tensor", None),
    "sub.Scalar": ("aten::sub.Scalar", None),
    "neg": ("aten::neg", None),
    "sin": ("aten::sin", None),
    "tanh": ("aten::tanh", None),
    "clone": ("aten::clone", None),
    "contiguous": ("aten::contiguous", None),
    "sum": ("aten::sum.dim_IntList", None),
    "mean": ("aten::mean.dim", None),
    "cat": ("aten::cat", None),
    "where": ("aten::where.self", None),
    "flip": ("aten::flip", None),
    "matmul": ("aten::matmul", None),
    "empty_like": ("aten::empty_like", None),
    # in place
    "add_": ("aten::add_.Tensor", None),
    "add_.Scalar": ("aten::add_.Scalar", None),
    "mul_": ("aten::mul_.Tensor", None),
    "mul_.Scalar": ("aten::mul_.Scalar", None),
    "sub_": ("aten::sub_.Tensor", None),
    "sub_.Scalar": ("aten::sub_.Scalar", None),
    "copy_": ("aten::copy_", None),
    "zero_": ("aten::zero_", None),
    "fill_": ("aten::fill_.Scalar", None),
    "clamp_": ("aten::clamp_", None),
    "neg_": ("aten::neg_", None),
    "addcmul_": ("aten::addcmul_", None),
    # index constants are parameters, not program values: bind the program's tensors by name
    "index_put_": ("aten::index_put_", ("self", "values")),
    "index_fill_": ("aten::index_fill_.int_Scalar", ("self",)),
    "masked_fill_": ("aten::masked_fill_.Scalar", None),
    "scatter_": ("aten::scatter_.src", ("self", "src")),
    "scatter_.value": ("aten::scatter_.value", ("self",)),
    # x[idx] = y is copy_ into the view x[idx] (writes narrows to it); x[idx] += y is add_
    "setitem": ("aten::copy_", None),
    "setitem.Scalar": ("aten::fill_.Scalar", None),
    "setitem_iadd": ("aten::add_.Tensor", None),
    "setitem_iadd.Scalar": ("aten::add_.Scalar", None),
    # index tensors from the program (args: x, values, i0, ...)
    "index_put_.Tensor": ("aten::index_put_", ("self", "values", "indices")),
    "setitem_tensor": ("aten::index_put_", ("self", "values", "indices")),
    "setitem_tensor.Scalar": ("aten::index_put_", ("self", "indices")),
    "getitem_tensor": ("aten::index.Tensor", ("self", "indices")),
    "_foreach_add_.Scalar": ("aten::_foreach_add_.Scalar", None),
    # out=
    "add.out": ("aten::add.out", None),
    "mul.out": ("aten::mul.out", None),
    "add.Scalar_out": ("aten::add.out", ("self", "out")),
    "mul.Scalar_out": ("aten::mul.out", ("self", "out")),
    "aminmax.out": ("aten::aminmax.out", None),
    # functional scatters
    "slice_scatter": ("aten::slice_scatter", None),
    "select_scatter": ("aten::select_scatter", None),
    "diagonal_scatter": ("aten::diagonal_scatter", None),
    # the index family: in place, functional, out= (index/mask constants are parameters)
    **_INDEX_FAMILY,
    # windowed and raw-strided views (fuzz/ops/windows.py)
    **_WINDOWS,
    # in-place ops without an Inductor lowering, and their functional forms
    **_FALLBACKS,
    # foreach list-list forms
    **_FOREACH,
    # out= beyond add/mul
    **_OUTS2,
}
# ``with torch.no_grad(): <in-place row>`` calls the inner row's op (fuzz/ops/autograd.py)
SCHEMAS.update({f"{NO_GRAD}.{n}": SCHEMAS[n] for n in NO_GRAD_INNER})

#: row name (or ``kind:<kind>`` for a whole kind) -> why it has no schema; its written
#: operands are the row's ``mutates``.
NO_SCHEMA: dict[str, str] = {
    "index": "x[idx] is a Python composition of select/slice/unsqueeze views; writes nothing",
    "zeros": "a factory; its optional tensor argument only lends its device",
    "full": "a factory; its optional tensor argument only lends its device",
    GRAD: "torch.autograd.grad runs the autograd engine over the program's graph; it "
    "writes no program tensor and returns a fresh gradient (fuzz/ops/autograd.py)",
    "kind:triton": "a user Triton launch: its writes are the shadow's exact per-launch "
    "footprint (fuzz/ops/_kernelgen.py), checked for racing program instances instead",
    "kind:control": "Python control flow around ordinary in-place statements, run in order",
    "optional_add": "x if y is None else torch.add(x, y): a Python conditional around "
    "aten::add.Tensor (fuzz/ops/optional.py); writes nothing",
    **{name: "metadata-only mutation: the schema's Tensor(a!) covers sizes and strides, no "
       "element is written (fuzz/ops/metadata.py)"
       for name in (d.name for d in _METADATA)},
}


def _resolve(qualified: str) -> Any:
    ns, _, rest = qualified.partition("::")
    op, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, ns), op), overload or "default")


@functools.cache
def op_schema(qualified: str) -> torch._C.FunctionSchema:
    """The ``FunctionSchema`` of ``namespace::op.overload``; RuntimeError if torch lacks it."""
    try:
        return _resolve(qualified)._schema
    except (AttributeError, RuntimeError) as e:
        raise RuntimeError(f"no torch operator {qualified!r}: {e}") from None


def schema_of(d: OpDef) -> tuple[str, tuple[str, ...] | None] | None:
    """``(qualified overload, argument names)`` bound to row ``d``, or None (see NO_SCHEMA)."""
    if d.kind is OpKind.CUSTOM and d.name.startswith("fz."):
        return (f"aliasfuzz::{d.name[3:]}", None)
    return SCHEMAS.get(d.name)


def _is_tensor(t: Any) -> bool:
    if isinstance(t, torch._C.OptionalType | torch._C.ListType):
        return _is_tensor(t.getElementType())
    return isinstance(t, torch._C.TensorType)


def bind(d: OpDef, n_args: int) -> tuple[torch._C.Argument, ...]:
    """The schema argument each of ``d``'s ``n_args`` tensor arguments binds to.

    Raises RuntimeError when ``d`` has no schema or the arguments do not fit it (a registry
    bug, caught by ``tests/unit/test_schema.py``).
    """
    bound = schema_of(d)
    if bound is None:
        raise RuntimeError(f"{d.name} has no schema ({NO_SCHEMA.get(d.name, 'not listed')})")
    schema = op_schema(bound[0])
    by_name = {a.name: a for a in schema.arguments}
    names = bound[1] or tuple(a.name for a in schema.arguments if _is_tensor(a.type))
    lists = [n for n in names if isinstance(by_name[n].type, torch._C.ListType)]
    rest = n_args - (len(names) - len(lists))
    # several list arguments (foreach list-list forms) share the remaining arguments equally
    if rest < 0 or (not lists and rest != 0) or (lists and rest % len(lists)):
        raise RuntimeError(f"{d.name}: {n_args} tensor arguments do not fit {schema}")
    each = rest // len(lists) if lists else 0
    out: list[torch._C.Argument] = []
    for n in names:
        out += [by_name[n]] * (each if n in lists else 1)
    return tuple(out)


def _writes(a: torch._C.Argument) -> bool:
    return a.alias_info is not None and a.alias_info.is_write


_WRITTEN: dict[tuple[str, int], tuple[int, ...]] = {}


def written_operands(d: OpDef, n_args: int) -> tuple[int, ...]:
    """Indices of the tensor arguments a statement of ``d`` with ``n_args`` arguments writes:
    from the schema's alias annotations, or the row's ``mutates`` for a row in NO_SCHEMA.
    Raises RuntimeError when the row's schema does not resolve or fit (a registry bug)."""
    key = (d.name, n_args)
    if key not in _WRITTEN:
        if schema_of(d) is None:
            _WRITTEN[key] = d.mutated_indices(n_args)
        else:
            _WRITTEN[key] = tuple(i for i, a in enumerate(bind(d, n_args)) if _writes(a))
    return _WRITTEN[key]
