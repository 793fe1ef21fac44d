"""Metadata-mutating in-place ops: ``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``,
``as_strided_``, and ``detach_`` (autograd metadata only: ``requires_grad`` becomes False,
the ``requires_grad`` check observes it; its layout does not change, so it retires nothing).

Each changes the sizes, strides (and for ``as_strided_`` the storage offset) of its argument
*object* and returns that object; no element is written. The schema says ``Tensor(a!)``
(``aten::t_(Tensor(a!) self) -> Tensor(a!)``), which covers the metadata, not data: for the
one-eager-meaning rules these rows write nothing (``schema.NO_SCHEMA``). The result's layout
is the matching view's (``views._t``, ``_transpose``, ``_squeeze``, ``_unsqueeze``,
``_as_strided``: ``aten/src/ATen/native/TensorShape.cpp``'s ``t_``/``transpose_``/
``squeeze_``/``unsqueeze_`` call the same geometry and ``as_strided_`` sets it).

The IR is SSA: ``v3 = v1.t_()`` binds a new name to the mutated object, and every name
that may be that object (:func:`retires`) stops meaning its old layout, so validation
retires it: a later statement may not read it, the program may not return it
(:func:`aliasfuzz.fuzz.validate.infer`). An input mutated so stays observable through the
``inputs`` check (its shape and values after the call): AOTAutograd replays an input's
metadata mutation (``InputAliasInfo.mutates_metadata``, ``as_strided_`` of the input in
``torch/_functorch/_aot_autograd/runtime_wrappers.py``), and Dynamo graph-breaks on an
in-place view of a graph input ("Getting an inplace view on a graph input is not
supported"), so the op runs eagerly between graphs there.

The bug class (issue 15, metadata mutation of inputs and of views): functionalization
replays ``a.t_()`` of an input as ``as_strided_`` plus ``copy_`` into the input, which
rewrites its storage, and so every other alias of it.
"""

from __future__ import annotations

from aliasfuzz.fuzz.ops import _viewgen as g
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta
from aliasfuzz.fuzz.ops.views import (
    _as_strided,
    _squeeze,
    _t,
    _transpose,
    _unsqueeze,
    as_strided_render,
)

__all__ = ["BASE_ONLY", "OPS", "TAG", "is_base", "retires"]

#: The tag of these rows: validation retires the names of the mutated object.
TAG = "mutates_metadata"
#: The tag of a row whose argument must be a base, never a view: ``detach_`` (eager:
#: "Can't detach views in-place", ``VariableTypeManual.cpp``'s ``detach_``). Validation
#: accepts only a name bound to the fresh storage it allocated (:func:`is_base`).
BASE_ONLY = "base_only"


def is_base(name: str, meta: ValueMeta | None, inputs: set[str]) -> bool:
    """Whether ``name`` is surely a base tensor: a statement result whose storage is the
    one it allocated (fresh results are named after their statement's result,
    :func:`aliasfuzz.fuzz.ops.core.fresh`). Inputs are refused (the eager reference
    builds one that does not require grad as a view of its storage), and so is every other
    alias, a view or the object of an in-place result: this may refuse a valid program,
    never accepts an invalid one."""
    return meta is not None and name not in inputs and meta.storage == name


def retires(values: dict[str, ValueMeta | None], arg: str) -> set[str]:
    """The names of ``values`` that may be the object a metadata mutation of ``arg``
    changes: ``arg`` and every name whose abstract value equals ``arg``'s (same storage,
    dtype, sizes, strides and offset). In SSA the same object never has two layouts before
    its metadata changes, and every way a statement returns an argument object itself
    (in-place and ``out=`` results, ``dropout(training=False)``, ``contiguous()`` of a
    contiguous tensor) keeps its layout, so this is a superset of the object's names: a
    distinct view of the same layout is retired too (conservative, never unsound)."""
    m = values.get(arg)
    return {arg} | ({n for n, v in values.items() if v is not None and v == m} if m is not None else set())


def _row(name: str, infer, apply, render, doc: str, gen, accepts=None) -> OpDef:
    return OpDef(
        name=name, kind=OpKind.VIEW, arity=1, infer=infer, apply=apply, render=render,
        doc=doc, gen=gen, accepts=accepts, mutates=(),
        tags=frozenset({TAG, "group:metadata"}),
    )


OPS = [
    _row("t_", _t, lambda t, p: t[0].t_(), lambda e, p: f"{e[0]}.t_()",
         "x.t_(): x itself, transposed (ndim <= 2)", lambda draw, metas: {},
         accepts=lambda metas: metas[0].ndim <= 2),
    _row("transpose_", _transpose, lambda t, p: t[0].transpose_(p["dim0"], p["dim1"]),
         lambda e, p: f"{e[0]}.transpose_({p['dim0']}, {p['dim1']})",
         "x.transpose_(dim0, dim1): x itself, two dims swapped", g.gen_transpose),
    _row("squeeze_", _squeeze,
         lambda t, p: t[0].squeeze_() if p.get("dim") is None else t[0].squeeze_(p["dim"]),
         lambda e, p: f"{e[0]}.squeeze_({'' if p.get('dim') is None else p['dim']})",
         "x.squeeze_() or x.squeeze_(dim): x itself, size-1 dims removed", g.gen_squeeze),
    _row("unsqueeze_", _unsqueeze, lambda t, p: t[0].unsqueeze_(p["dim"]),
         lambda e, p: f"{e[0]}.unsqueeze_({p['dim']})",
         "x.unsqueeze_(dim): x itself with a new size-1 dim", g.gen_unsqueeze),
    OpDef(
        name="detach_", kind=OpKind.VIEW, arity=1, infer=lambda metas, p, outs: (metas[0],),
        apply=lambda t, p: t[0].detach_(), render=lambda e, p: f"{e[0]}.detach_()",
        doc="x.detach_(): x itself, cut from the autograd graph (requires_grad False); "
            "x must be a base (eager refuses an in-place detach of a view)",
        gen=lambda draw, metas: {}, mutates=(), tags=frozenset({BASE_ONLY, "group:metadata"}),
    ),
    _row("as_strided_", _as_strided,
         lambda t, p: t[0].as_strided_(list(p["size"]), list(p["stride"]), p.get("offset")),
         as_strided_render("as_strided_"),
         "x.as_strided_(size, stride, offset): x itself, relaid within its storage",
         g.gen_as_strided),
]
