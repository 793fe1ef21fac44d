"""In-place ops Inductor has no lowering for, and their functional forms.

Inductor runs these as fallback kernels (``make_fallback`` / ``fallback_handler`` in
``torch/_inductor/lowering.py``: ``aten.gcd``, ``aten.digamma``, ``aten.igamma``,
``aten.cumsum``, ``aten.cumprod``; ``aten.lcm`` is decomposed into ``gcd``), so their
mutations reach the reinplace pass as ``ExternKernel`` nodes, not as scheduler buffers:

* ``x.gcd_(y)``, ``x.lcm_(y)``; ``torch.gcd(x, y)``, ``torch.lcm(x, y)``: integer tensors
  only (ATen has no floating or bool kernel); ``y`` broadcasts to ``x`` in place;
* ``x.digamma_()``, ``torch.digamma(x)``: floating only (an integer ``x`` has no in-place
  form; its functional form promotes, not modelled);
* ``x.igamma_(y)``, ``torch.igamma(x, y)``: floating only;
* ``x.cumsum_(dim)``, ``x.cumprod_(dim)``; ``torch.cumsum(x, dim)``, ``torch.cumprod(x, dim)``:
  not bool; the functional result is contiguous (``set_output_raw_strided`` with no strides)
  and integer inputs accumulate in int64, as ATen does.

The rows carry the tag ``group:fallback``: the generator draws them as one slot of the
in-place and of the functional family. Footprints are whole operands: each writes all of ``self`` and reads its arguments whole,
so an argument partially overlapping ``self`` is the general ``partial-read-write-overlap``
rule, and ``x.gcd_(x)`` (read and written whole) is defined.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ops._build import category, elementwise_infer, fresh_strided, inplace_infer
from aliasfuzz.fuzz.ops._inplacegen import disjoint
from aliasfuzz.fuzz.ops._layout import tensor_iterator_strides
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, broadcast_shapes, fresh, norm_dim

__all__ = ["OPS", "SCHEMAS"]

_INT, _FLOAT = 1, 2


def _need(cat: int, what: str):
    def check(metas) -> None:
        for m in metas:
            if category(m.dtype) != cat:
                kind = "integer" if cat == _INT else "floating"
                raise InvalidArgument(f"{what} is implemented for {kind} tensors only, got {m.dtype}")

    return check


def _elementwise(check, inplace: bool):
    def infer(metas, p, outs):
        check(metas)
        return inplace_infer(metas, {}, outs) if inplace else elementwise_infer(metas, {}, outs)

    return infer


def _ok(check, inplace: bool):
    def ok(metas) -> bool:
        try:
            check(metas)
            shape = broadcast_shapes(*(m.shape for m in metas))
        except InvalidArgument:
            return False
        if not inplace:
            return True
        self = metas[0]
        # what ATen refuses or validation rejects: a self-overlapping self, a broadcast
        # result, an operand partially overlapping self (the general rules would redraw)
        return (shape == self.shape and not self.has_internal_overlap()
                and all(m == self or disjoint([self, m]) for m in metas[1:]))

    return ok


def _cum_infer(name: str, inplace: bool):
    def infer(metas, p, outs):
        (m,) = metas
        if m.dtype == "bool":
            raise InvalidArgument(f"{name} of a bool tensor is not modelled")
        norm_dim(p["dim"], m.ndim)
        if inplace:
            return (m,)
        dt = "int64" if category(m.dtype) == _INT else m.dtype
        return (fresh(outs[0], m.shape, dt),)

    return infer


def _gen_dim(draw, metas) -> dict:
    m = metas[0]
    if m.ndim == 0:
        raise GenerationFailure("a cumulative op over a 0-d tensor adds nothing")
    return {"dim": draw.integer(0, m.ndim - 1)}


def _unary_infer(check, inplace: bool):
    def infer(metas, p, outs):
        check(metas)
        (m,) = metas
        if inplace:
            return (m,)
        return (fresh_strided(outs[0], m.shape, tensor_iterator_strides(m.shape, [(m.shape, m.stride)]),
                              m.dtype),)

    return infer


def _kind(inplace: bool) -> OpKind:
    return OpKind.INPLACE if inplace else OpKind.FUNCTIONAL


def _binary(name: str, cat: int) -> list[OpDef]:
    check = _need(cat, name)
    return [
        OpDef(name=f"{name}_", kind=OpKind.INPLACE, arity=2, infer=_elementwise(check, True),
              apply=lambda t, p, n=name: getattr(t[0], f"{n}_")(t[1]),
              render=lambda e, p, n=name: f"{e[0]}.{n}_({e[1]})", mutates=(0,),
              doc=f"x.{name}_(y): y broadcasts to x (an Inductor fallback)",
              gen=lambda draw, metas: {}, accepts=_ok(check, True)),
        OpDef(name=name, kind=OpKind.FUNCTIONAL, arity=2, infer=_elementwise(check, False),
              apply=lambda t, p, n=name: getattr(torch, n)(t[0], t[1]),
              render=lambda e, p, n=name: f"torch.{n}({e[0]}, {e[1]})",
              doc=f"torch.{name}(x, y): broadcast, TensorIterator's layout (an Inductor fallback)",
              gen=lambda draw, metas: {}, accepts=_ok(check, False)),
    ]


def _unary(name: str) -> list[OpDef]:
    check = _need(_FLOAT, name)
    return [
        OpDef(name=f"{name}_", kind=OpKind.INPLACE, arity=1, infer=_unary_infer(check, True),
              apply=lambda t, p, n=name: getattr(t[0], f"{n}_")(),
              render=lambda e, p, n=name: f"{e[0]}.{n}_()", mutates=(0,),
              doc=f"x.{name}_() (floating; an Inductor fallback)", gen=lambda draw, metas: {},
              accepts=lambda metas, c=check: _ok(c, True)(metas)),
        OpDef(name=name, kind=OpKind.FUNCTIONAL, arity=1, infer=_unary_infer(check, False),
              apply=lambda t, p, n=name: getattr(torch, n)(t[0]),
              render=lambda e, p, n=name: f"torch.{n}({e[0]})",
              doc=f"torch.{name}(x) (floating; an Inductor fallback)", gen=lambda draw, metas: {},
              accepts=_ok(check, False)),
    ]


def _cumulative(name: str) -> list[OpDef]:
    def ok(inplace):
        return lambda metas: (metas[0].dtype != "bool" and metas[0].ndim >= 1
                              and not (inplace and metas[0].has_internal_overlap()))

    return [
        OpDef(name=f"{name}_", kind=OpKind.INPLACE, arity=1, infer=_cum_infer(name, True),
              apply=lambda t, p, n=name: getattr(t[0], f"{n}_")(p["dim"]),
              render=lambda e, p, n=name: f"{e[0]}.{n}_({p['dim']})", mutates=(0,),
              doc=f"x.{name}_(dim): in place along dim (an Inductor fallback)",
              gen=_gen_dim, accepts=ok(True)),
        OpDef(name=name, kind=OpKind.FUNCTIONAL, arity=1, infer=_cum_infer(name, False),
              apply=lambda t, p, n=name: getattr(torch, n)(t[0], p["dim"]),
              render=lambda e, p, n=name: f"torch.{n}({e[0]}, {p['dim']})",
              doc=f"torch.{name}(x, dim): contiguous; integers accumulate in int64 (an Inductor fallback)",
              gen=_gen_dim, accepts=ok(False)),
    ]


#: one generator slot per family (``strategies._slots``): the rows already there keep most
#: of their weight
_GROUP = frozenset({"group:fallback"})

OPS = [
    replace(d, tags=d.tags | _GROUP)
    for d in (*_binary("gcd", _INT), *_binary("lcm", _INT), *_unary("digamma"),
              *_binary("igamma", _FLOAT), *_cumulative("cumsum"), *_cumulative("cumprod"))
]

#: schema bindings (:mod:`.schema`)
SCHEMAS = {
    **{f"{n}_": (f"aten::{n}_", None) for n in ("gcd", "lcm", "digamma", "igamma", "cumsum", "cumprod")},
    **{n: (f"aten::{n}", None) for n in ("gcd", "lcm", "digamma", "igamma")},
    "cumsum": ("aten::cumsum", None),
    "cumprod": ("aten::cumprod", None),
}
