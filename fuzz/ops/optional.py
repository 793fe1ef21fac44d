"""Ops with an ``Optional[Tensor]`` argument: the None-vs-tensor seam of TorchScript.

TorchScript's profiling executor records, for an ``Optional[Tensor]`` input, whether it
saw ``None`` (``prim::profile`` with ``seen_none``) and specializes the optimized graph on
what it saw; a later call that passes the other kind must take the guard's fallback
(``profiling_graph_executor_impl.cpp``, ``specialize_autogradzero.cpp``). The rows here
are the program-level spelling of that pattern, the one models write for an optional bias
or residual::

    a = (x if y is None else torch.add(x, y))

``optional_add`` (tag ``accepts_none``: its second argument may be ``None``): with ``y``
``None`` the result is ``x`` itself (an alias, tag ``maybe_alias``: ``infer`` returns
``x``'s value), else a fresh broadcast sum (``torch.add``'s TensorIterator layout,
:func:`~aliasfuzz.fuzz.ops._build.elementwise_infer`). Its first argument may not be
``None``. Scriptable: TorchScript refines ``y`` to ``Tensor`` in the ``else`` branch
(``prim::If`` with ``prim::unchecked_cast``, checked on torch 2.13).

The row has no ``gen``: the ordinary statement loop would hand it any value as ``y``.
:mod:`aliasfuzz.fuzz._genoptional` adds it with a fresh optional input of its own, whose
None-ness TorchScript's pipeline flips between calls
(:func:`aliasfuzz.fuzz.optional.toggled`).
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops._build import elementwise_infer
from aliasfuzz.fuzz.ops.core import OpDef, OpKind

__all__ = ["ACCEPTS_NONE", "OPS"]

#: The registry tag of a row whose arguments after the first may be ``None``.
ACCEPTS_NONE = "accepts_none"


def _optional_add_infer(metas, p, outs):
    x, y = metas
    if x is None:
        raise InvalidArgument("optional_add: its first argument may not be None")
    if y is None:
        return (x,)  # ``x`` itself: no new storage
    return elementwise_infer((x, y), {}, outs)


def _optional_add_apply(t, p):
    x, y = t
    return x if y is None else torch.add(x, y)


OPS = [
    OpDef(
        name="optional_add", kind=OpKind.FUNCTIONAL, arity=2, infer=_optional_add_infer,
        apply=_optional_add_apply,
        render=lambda e, p: f"({e[0]} if {e[1]} is None else torch.add({e[0]}, {e[1]}))",
        doc="x if y is None else torch.add(x, y): x itself for None, else a fresh sum",
        tags=frozenset({ACCEPTS_NONE, "maybe_alias"}),
    ),
]
