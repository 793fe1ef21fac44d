"""Foreach list-list forms: ``_foreach_add_`` / ``_foreach_mul_`` / ``_foreach_copy_`` /
``_foreach_lerp_`` over two tensor lists.

``torch._foreach_add_([a0, a1], [b0, b1], alpha=s)`` is ``a_i.add_(b_i, alpha=s)`` for each
``i``: the tensor arguments are the written list ``self`` then the read list (equal
lengths, tag ``pairs``: the generator draws an even number of arguments). The lists may hold
distinct views of one base.

What has one eager meaning (``aten/src/ATen/native/ForeachUtils.h``): CPU and the slow path
run the entries one after another, CUDA's fast path (``multi_tensor_apply``) all at once.

* two written entries overlapping: the general ``overlapping-writes`` rule (validation);
* a read entry partially overlapping a written one: the general ``partial-read-write-overlap``;
* a read entry ``b_j`` overlapping a written ``a_i`` with ``i != j`` (even with ``a_i``'s very
  layout: ``_foreach_add_([a, b], [b, a])``): the slow path reads ``b_j`` after (or before)
  entry ``i`` wrote it, the fast path whenever its block runs. The general rule exempts an
  operand read and written whole, which here holds only for its own entry, so the row
  raises ``partial-read-write-overlap`` itself (``infer``), knowing the pairing.

Entries are modelled with equal shapes and dtypes per pair (the fast path's condition; the
slow path's broadcasting and promotion are not drawn), not bool; ``lerp`` is floating only.
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops._build import fits, lit, scalar_param
from aliasfuzz.fuzz.ops._inplacegen import disjoint
from aliasfuzz.fuzz.ops.core import NoEagerMeaning, OpDef, OpKind, ValueMeta
from aliasfuzz.fuzz.ops.overlap import overlap

__all__ = ["OPS", "SCHEMAS"]

_FLOAT = ("float32", "float64", "float16", "bfloat16")


def _halves(metas) -> tuple[list[ValueMeta], list[ValueMeta]]:
    if len(metas) % 2:
        raise InvalidArgument(f"a foreach list-list op takes two lists of equal length, got "
                              f"{len(metas)} tensors")
    k = len(metas) // 2
    return list(metas[:k]), list(metas[k:])


def _pairs_ok(name: str, metas) -> None:
    selfs, others = _halves(metas)
    for i, (a, b) in enumerate(zip(selfs, others, strict=True)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise InvalidArgument(f"{name}: entry {i}: {a.shape} {a.dtype} and {b.shape} {b.dtype} "
                                  "(equal shapes and dtypes are modelled)")
        if a.dtype == "bool":
            raise InvalidArgument(f"{name} of bool tensors is not modelled")
        if name == "_foreach_lerp_" and a.dtype not in _FLOAT:
            raise InvalidArgument(f"{name} needs floating tensors, got {a.dtype}")


def _cross_entry(selfs, others) -> str | None:
    for i, a in enumerate(selfs):
        for j, b in enumerate(others):
            if i == j:
                continue
            ans = overlap(a, b)
            if ans.overlaps is None:
                return f"cannot decide whether read entry {j} overlaps written entry {i}"
            if ans.overlaps:
                return (f"read entry {j} shares byte {ans.byte} of {a.storage} with written "
                        f"entry {i}: the entries run in an order only the slow path fixes")
    return None


def _scalar(name: str, p, dtype: str):
    key = {"_foreach_add_": "alpha", "_foreach_lerp_": "weight"}.get(name)
    if key is None:
        return None
    v = scalar_param(p, key) if key in p else 1
    if isinstance(v, float) and dtype not in _FLOAT:
        raise InvalidArgument(f"{name}: a float {key} on {dtype} tensors")
    if not fits(v, dtype):
        raise InvalidArgument(f"{name}: {key} {v} does not fit {dtype}")
    return v


def _infer(name: str):
    def infer(metas, p, outs):
        _pairs_ok(name, metas)
        selfs, others = _halves(metas)
        for a in selfs:
            _scalar(name, p, a.dtype)
        why = _cross_entry(selfs, others)
        if why is not None:
            from aliasfuzz.fuzz.validate import RULES

            rule = next(r for r in RULES if r.name == "partial-read-write-overlap")
            raise NoEagerMeaning(rule.name, rule.summary, f"{name}: {why}")
        return ()

    return infer


def _ok(name: str):
    def ok(metas) -> bool:
        if len(metas) % 2:
            return False
        try:
            _pairs_ok(name, metas)
        except InvalidArgument:
            return False
        selfs, others = _halves(metas)
        return (all(not a.has_internal_overlap() for a in selfs) and disjoint(selfs)
                and _cross_entry(selfs, others) is None
                and all(a == b or disjoint([a, b]) for a, b in zip(selfs, others, strict=True)))

    return ok


def _gen(name: str):
    def gen(draw, metas) -> dict:
        dtype = metas[0].dtype
        if name == "_foreach_add_":
            return {"alpha": draw.scalar(dtype)} if draw.boolean(0.3) else {}
        if name == "_foreach_lerp_":
            return {"weight": draw.choice([0.5, 0.0, 1.0, 0.25, 2.0])}
        return {}

    return gen


def _kwargs(name: str, p) -> dict:
    if name == "_foreach_add_" and "alpha" in p:
        return {"alpha": p["alpha"]}
    return {}


def _apply(name: str):
    def apply(t, p):
        k = len(t) // 2
        fn = getattr(torch, name)
        if name == "_foreach_lerp_":
            return fn(list(t[:k]), list(t[k:]), p["weight"])
        return fn(list(t[:k]), list(t[k:]), **_kwargs(name, p))

    return apply


def _render(name: str):
    def render(e, p):
        k = len(e) // 2
        parts = [f"[{', '.join(e[:k])}]", f"[{', '.join(e[k:])}]"]
        if name == "_foreach_lerp_":
            parts.append(lit(p["weight"]))
        parts += [f"{key}={lit(v)}" for key, v in _kwargs(name, p).items()]
        return f"torch.{name}({', '.join(parts)})"

    return render


#: op -> registry row: the ATen overload's name (``lerp``'s list-list form with a scalar
#: weight is the overload ``Scalar``)
_ROW = {"_foreach_add_": "_foreach_add_.List", "_foreach_mul_": "_foreach_mul_.List",
        "_foreach_copy_": "_foreach_copy_", "_foreach_lerp_": "_foreach_lerp_.Scalar"}

_DOCS = {
    "_foreach_add_": "torch._foreach_add_(xs, ys, alpha=a): x_i += a * y_i; returns None",
    "_foreach_mul_": "torch._foreach_mul_(xs, ys): x_i *= y_i; returns None",
    "_foreach_copy_": "torch._foreach_copy_(xs, ys): x_i.copy_(y_i); returns None",
    "_foreach_lerp_": "torch._foreach_lerp_(xs, ys, w): x_i += w * (y_i - x_i); returns None",
}

OPS = [
    OpDef(name=_ROW[n], kind=OpKind.INPLACE, arity=(2, 6),
          infer=_infer(n), apply=_apply(n), render=_render(n), mutates=None, reads=None, n_out=0,
          doc=doc, gen=_gen(n), accepts=_ok(n), tags=frozenset({"pairs", "group:foreach"}))
    for n, doc in _DOCS.items()
]

#: schema bindings (:mod:`.schema`): two list arguments share the row's tensors equally
SCHEMAS = {row: (f"aten::{row}", None) for row in _ROW.values()}
