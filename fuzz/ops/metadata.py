"""Metadata-mutating in-place ops: ``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``,
``as_strided_``, ``resize_`` / ``resize_as_``, ``set_`` (rebinding to another tensor's
storage and layout, or to a strided slice of its storage: ``set_.storage``), and the
autograd-metadata rows ``detach_`` (``requires_grad`` becomes False) and ``requires_grad_``
(a base becomes a leaf requiring grad); the ``requires_grad`` check observes both, and their
layout does not change, so they retire nothing.

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

``resize_`` keeps the storage offset and, unless the sizes are already the tensor's (then
nothing changes: ``resize_impl_cpu_`` returns early), gives contiguous strides; a resize
that needs more bytes than the storage holds grows it with uninitialised memory, which no
eager run gives one meaning to read: those are refused (:func:`resized`), so every resize
drawn or accepted only relays the tensor within its storage. Its new layout is absolute in
the storage, like ``as_strided_``'s, and follows the same ``layout-readout`` rule
(:mod:`aliasfuzz.fuzz.layout_contract`: the new layout may reach only elements of the
tensor resized). ``set_.storage`` is ``as_strided`` on the *source's* storage (the same
rule, with the source as the tensor it is taken from). ``set_`` and ``set_.storage`` need
the source's dtype (eager refuses another for ``set_``; for a storage the shadow's fp64
upcast would give another byte layout). Eager refuses ``resize_`` of a tensor requiring grad
and ``set_`` of a leaf requiring grad: :func:`aliasfuzz.fuzz.grads.grad_exclusion` keeps the
generator from marking inputs such programs change, and a hand-written one is
``invalid-program`` by the exceptions check. Dynamo graph-breaks on every ``resize_``,
``resize_as_`` and ``set_.storage`` (``method_resize_``, ``method_set_`` in
``torch/_dynamo/variables/tensor.py``) and traces ``set_(y)`` of an intermediate
(AOTAutograd's ``mutates_storage_metadata``); of a graph input it graph-breaks (an in-place
view).

``requires_grad_`` (tag :data:`GRAD_LEAF`) takes a base only (as ``detach_``: inputs get
``requires_grad`` from :func:`aliasfuzz.fuzz.grads.mark_grad_leaves`). From that statement
on, its storage belongs to a leaf requiring grad: eager refuses an in-place write to it or
to a view of it, and validation refuses every later write to that storage and every later
metadata change of a tensor on it (:func:`aliasfuzz.fuzz.validate.infer`; conservative: a
view taken before the call could still be written in eager). Dynamo traces it on an
intermediate and graph-breaks when the leaf leaks as an output.

The bug class (issue 15, metadata mutation of inputs and of views): functionalization
replays ``a.t_()`` of an input as ``as_strided_`` plus ``copy_`` into the input, which
rewrites its storage, and so every other alias of it.
"""

from __future__ import annotations

import math

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ir import contiguous_strides
from aliasfuzz.fuzz.ops import _viewgen as g
from aliasfuzz.fuzz.ops.core import Draw, OpDef, OpKind, ValueMeta
from aliasfuzz.fuzz.ops.views import (
    _as_strided,
    _int,
    _ints,
    _squeeze,
    _t,
    _transpose,
    _unsqueeze,
    as_strided_render,
)

__all__ = ["BASE_ONLY", "GRAD_LEAF", "OPS", "OWN_STREAM", "TAG", "is_base", "resize_room", "resized", "retires"]

#: The tag of these rows: validation retires the names of the mutated object.
TAG = "mutates_metadata"
#: The tag of a row whose argument must be a base, never a view: ``detach_`` (eager:
#: "Can't detach views in-place", ``VariableTypeManual.cpp``'s ``detach_``). Validation
#: accepts only a name bound to the fresh storage it allocated (:func:`is_base`).
BASE_ONLY = "base_only"
#: The tag of ``requires_grad_``: its argument becomes a leaf requiring grad; validation
#: refuses later writes and metadata changes on its storage (eager refuses them).
GRAD_LEAF = "grad_leaf"
#: The tag of rows the default statement draw leaves out: :mod:`aliasfuzz.fuzz._genmeta`
#: draws them on a stream of its own (adding them to the ``group:metadata`` slot would
#: change the programs every existing seed gives).
OWN_STREAM = "own_stream"


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


def _row(name: str, infer, apply, render, doc: str, gen, accepts=None, arity=1, extra=(),
         **kw) -> OpDef:
    tags = {TAG, "group:metadata"} if not extra else {TAG, *extra}
    return OpDef(
        name=name, kind=OpKind.VIEW, arity=arity, infer=infer, apply=apply, render=render,
        doc=doc, gen=gen, accepts=accepts, mutates=(), tags=frozenset(tags), **kw,
    )


def resized(m: ValueMeta, size) -> ValueMeta:
    """The layout of ``m`` after ``resize_(size)``: ``m`` itself when ``size`` is already
    its shape (``resize_impl_cpu_`` returns early: strides kept), else contiguous strides
    from the same storage offset (``at::native::resize_``, ``aten/src/ATen/native/Resize.cpp``).

    Raises :class:`InvalidArgument` for a negative size and for a resize needing more bytes
    than the storage holds (``computeStorageNbytesContiguous``: ``(offset + numel) *
    itemsize``): eager would grow the storage with uninitialised memory, which has no one
    eager meaning to read, so such resizes are not modelled."""
    size = _ints(size, "resize_ size")
    if any(n < 0 for n in size):
        raise InvalidArgument(f"resize_: negative size in {list(size)}")
    if size == m.shape:
        return m
    need = (m.offset + math.prod(size)) * m.itemsize
    if need > m.storage_nbytes:
        raise InvalidArgument(
            f"resize_ to {list(size)} needs {need} bytes but the storage has "
            f"{m.storage_nbytes}: growing it makes uninitialised memory (not modelled)"
        )
    return m.view(size, contiguous_strides(size), m.offset)


def resize_room(m: ValueMeta) -> int:
    """How many elements ``m`` may be resized to under the ``layout-readout`` rule: the
    longest run of storage elements ``m.offset, m.offset + 1, ...`` that are all elements of
    ``m`` (a resize reaching others reads memory compiled code need not keep); 0 for an
    empty tensor or one too large to enumerate."""
    from aliasfuzz.fuzz.layout_contract import storage_elements

    els = storage_elements(m) if m.numel else None
    if not els:
        return 0
    k = 0
    while m.offset + k in els:
        k += 1
    return k


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _shape_of(draw: Draw, n: int) -> list[int]:
    """A shape of ``n`` elements with 0 to 3 dims (0 dims only for one element)."""
    nd = draw.integer(0 if n == 1 else 1, 3)
    if n == 0:
        size = [draw.integer(1, 3) for _ in range(nd)]
        size[draw.integer(0, nd - 1)] = 0
        return size
    size, rest = [], n
    for _ in range(nd - 1):
        d = draw.choice(_divisors(rest))
        size.append(d)
        rest //= d
    return size + [rest] if nd else []


def gen_resize(draw: Draw, metas) -> dict:
    """A ``resize_`` within the tensor's own elements (:func:`resize_room`): its own shape
    (no change), as many elements laid out anew, or fewer (down to none)."""
    m = metas[0]
    room = resize_room(m)
    if draw.boolean(0.15):
        return {"size": list(m.shape)}
    n = min(m.numel, room) if not draw.boolean(0.3) else draw.integer(0, room)
    return {"size": _shape_of(draw, n)}


def _resize_as_infer(metas, p, outs):
    return (resized(metas[0], metas[1].shape),)


def _same_dtype(x: ValueMeta, y: ValueMeta, what: str) -> None:
    if x.dtype != y.dtype:
        raise InvalidArgument(f"{what}: a {x.dtype} tensor set to {y.dtype} memory "
                              "(eager: 'Could not set tensor of type ...')")


def _set_infer(metas, p, outs):
    x, y = metas
    _same_dtype(x, y, "set_")
    return (y,)


def _set_storage_infer(metas, p, outs):
    x, y = metas
    _same_dtype(x, y, "set_.storage")
    _int(p["offset"], "set_ storage offset")
    return _as_strided([y], p, outs)


def gen_set_storage(draw: Draw, metas) -> dict:
    """A strided slice of the source's storage made of the source's own elements (the
    ``layout-readout`` rule), as :func:`~aliasfuzz.fuzz.ops._viewgen.gen_as_strided` draws."""
    if metas[1].numel == 0:
        raise GenerationFailure("set_ to a slice of an empty tensor's storage")
    return g.gen_as_strided(draw, metas[1:])


def _requires_grad_infer(metas, p, outs):
    if not metas[0].is_float:
        raise InvalidArgument(f"requires_grad_: only floating tensors can require grad, got {metas[0].dtype}")
    return (metas[0],)


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
    # drawn on a stream of their own (OWN_STREAM: fuzz/_genmeta.py)
    _row("resize_", lambda metas, p, outs: (resized(metas[0], p["size"]),),
         lambda t, p: t[0].resize_(list(p["size"])),
         lambda e, p: f"{e[0]}.resize_({g.shape_lit(p['size'])})",
         "x.resize_(size): x itself, contiguous from its storage offset (its own sizes: "
         "unchanged); never past the storage's end", gen_resize, extra=(OWN_STREAM,)),
    _row("resize_as_", _resize_as_infer, lambda t, p: t[0].resize_as_(t[1]),
         lambda e, p: f"{e[0]}.resize_as_({e[1]})",
         "x.resize_as_(y): x.resize_(y.shape) (y's data and strides are not read)",
         lambda draw, metas: {}, arity=2, extra=(OWN_STREAM,), reads=(0,)),
    _row("set_", _set_infer, lambda t, p: t[0].set_(t[1]), lambda e, p: f"{e[0]}.set_({e[1]})",
         "x.set_(y): x itself, rebound to y's storage, offset, sizes and strides (same dtype)",
         lambda draw, metas: {}, arity=2, extra=(OWN_STREAM,), reads=(0,)),
    _row("set_.storage", _set_storage_infer,
         lambda t, p: t[0].set_(t[1].untyped_storage(), p["offset"], list(p["size"]), list(p["stride"])),
         lambda e, p: (f"{e[0]}.set_({e[1]}.untyped_storage(), {p['offset']}, "
                       f"{g.shape_lit(p['size'])}, {g.shape_lit(p['stride'])})"),
         "x.set_(y.untyped_storage(), offset, size, stride): x itself, rebound to a strided "
         "slice of y's storage (y's dtype; TorchScript has no untyped_storage)",
         gen_set_storage, arity=2, extra=(OWN_STREAM,), reads=(0,), scriptable=False),
    OpDef(
        name="requires_grad_", kind=OpKind.VIEW, arity=1, infer=_requires_grad_infer,
        apply=lambda t, p: t[0].requires_grad_(), render=lambda e, p: f"{e[0]}.requires_grad_()",
        doc="x.requires_grad_(): x itself, a leaf requiring grad (x a floating base); no later "
            "statement may write its storage or change its metadata",
        gen=lambda draw, metas: {}, mutates=(),
        tags=frozenset({BASE_ONLY, GRAD_LEAF, OWN_STREAM}),
    ),
]
