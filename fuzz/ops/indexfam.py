"""The index family beyond ``index_put_``: in-place, functional and ``out=`` rows.

``index_copy``, ``index_add`` (``alpha``), ``index_reduce`` (prod / mean / amax / amin,
``include_self``), ``scatter_add``, ``scatter_reduce`` (sum / prod / mean / amax / amin,
``include_self``), ``masked_scatter`` and ``put`` (``accumulate``), each as ``x.<op>_(...)``
(kind ``inplace``), ``torch.<op>(x, ...)`` (``functional``) and, where Python exposes ATen's
``out=`` overload, ``torch.<op>(x, ..., out=o)`` (``out``; ``masked_scatter.out`` and
``put.out`` exist in ATen but not as Python ``out=`` keywords, and are not drawn).

Tensor arguments: ``(self, source)``, then ``out`` for the ``out=`` rows. Index and mask
tensors are parameters rendered inline (``torch.tensor([...], device=x.device)``), so the
footprints are exact (rules in :mod:`._indexfam`):

* in place: writes the selected slices / elements of ``self`` (``writes``), reads
  ``source``; ATen refuses a self-overlapping ``self`` and (except ``masked_scatter_``) any
  memory shared by ``self`` and ``source`` (``infer`` raises); a ``source`` read through
  stride 0 (expanded) is fine;
* functional: a fresh result; ATen's structured kernels allocate it contiguous
  (``set_output_raw_strided`` without strides), ``put`` clones ``self`` preserving its
  layout (``empty_like``), ``masked_scatter`` clones it contiguous. An expanded ``self``
  is legal here: accumulating into the expanded tensor itself is what ATen refuses;
* ``out=``: writes all of ``out`` (``self``'s values, then the updates), reads ``self``
  and ``source``; ``out`` has ``self``'s shape and dtype (no resize) and shares no memory
  with ``source`` (``assert_no_overlap(result, source)``); ``out`` partially overlapping
  ``self`` is the general ``partial-read-write-overlap`` rule of validation.

The rows carry the tag ``group:index``: the generator draws them as one slot of each of its
families (``strategies._slots``), so the existing rows keep most of their weight.

Repeated indices: ``index_copy`` and ``put(accumulate=False)`` write one element twice and
are rejected (``duplicate-index-writes``); the accumulating ops combine repeats, in an
order that matters only for floating rounding, which the fp64 shadow's tolerance decides
(``oracle/README.md``, "One eager meaning").
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops import _indexfam as f
from aliasfuzz.fuzz.ops import _indexgen as gen
from aliasfuzz.fuzz.ops._build import fits, fresh_strided, lit, scalar_param
from aliasfuzz.fuzz.ops._inplacegen import as_lists
from aliasfuzz.fuzz.ops._layout import empty_like_strides
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta, fresh

__all__ = ["OPS"]

_KINDS = {"inplace": OpKind.INPLACE, "functional": OpKind.FUNCTIONAL, "out": OpKind.OUT}


# -- per-op rules: (self, source, params) -> (cells or parts of self written, repeats ok) --


def _alpha(self: ValueMeta, p) -> None:
    a = scalar_param(p, "alpha") if "alpha" in p else 1
    if isinstance(a, float) and not self.is_float:
        raise InvalidArgument("index_add: a float alpha on an integer tensor is not modelled")
    if not fits(a, self.dtype):
        raise InvalidArgument(f"index_add: alpha {a} does not fit {self.dtype}")


def _dim_rule(name: str, accumulate: bool):
    def rule(self, src, p):
        d, idx = f.dim_rows(self, src, p, name)
        if not accumulate:
            f.distinct(idx, name)
        if name == "index_add":
            _alpha(self, p)
        if name == "index_reduce" and f.reduce_param(p, f.INDEX_REDUCE, name) == "prod" and (
            self.dtype in ("float16", "bfloat16")
        ):
            # torch 2.13 CPU eager: "iter.ninputs() == traits::arity INTERNAL ASSERT FAILED"
            # (cpu/Loops.h) for every form; an eager fault, not a meaning to compare with
            raise InvalidArgument("index_reduce(prod) on float16/bfloat16 fails in eager "
                                  "(internal assert, torch 2.13 CPU): not modelled")
        return f.dim_parts(self, d, idx)

    return rule


def _scatter_rule(name: str):
    def rule(self, src, p):
        if name == "scatter_reduce":
            f.reduce_param(p, f.SCATTER_REDUCE, name)
        return [f.element(self, c) for c in dict.fromkeys(f.scatter_cells(self, src, p))]

    return rule


def _put_rule(self, src, p):
    cells = f.flat_cells(self, p, "put")
    if len(cells) != src.numel:
        raise InvalidArgument(f"put: source has {src.numel} elements, index {len(cells)}")
    if not isinstance(p.get("accumulate", False), bool):
        raise InvalidArgument("put: accumulate must be a bool")
    if not p.get("accumulate", False):
        f.distinct(cells, "put(accumulate=False)")
    return [f.element(self, c) for c in dict.fromkeys(cells)]


def _masked_rule(self, src, p):
    cells = f.mask_cells(self, p, "masked_scatter")
    if len(cells) > src.numel:
        raise InvalidArgument(f"masked_scatter: number of elements of source ({src.numel}) < "
                              f"number of ones in mask ({len(cells)})")
    return [f.element(self, c) for c in cells]


# -- rows ---------------------------------------------------------------------------------


def _infer(name: str, kind: str, rule):
    def infer(metas, p, outs):
        self, src = metas[0], metas[1]
        f.check_operands(self, src, name)
        rule(self, src, p)
        if kind == "inplace":
            # masked_scatter_ checks no overlap with source (eager reads it as it writes):
            # the general partial-read-write-overlap rule decides on the written elements
            f.check_inplace_target(self, None if name == "masked_scatter" else src, f"{name}_")
            return (self,)
        if kind == "out":
            out = metas[2]
            if out.shape != self.shape or out.dtype != self.dtype:
                raise InvalidArgument(f"{name}.out: out must have self's shape {self.shape} and "
                                      f"dtype {self.dtype} (no resizing here), got {out.shape} {out.dtype}")
            f.check_inplace_target(out, src, f"{name}.out")
            return (out,)
        if name == "put":  # self.clone(preserve).put_(...)
            return (fresh_strided(outs[0], self.shape, empty_like_strides(self.shape, self.stride), self.dtype),)
        return (fresh(outs[0], self.shape, self.dtype),)

    return infer


def _idx(t, v):
    return torch.tensor(as_lists(v), device=t.device)


def _idx_src(e0: str, v) -> str:
    return f"torch.tensor({f.nested_lit(v)}, device={e0}.device)"


#: op -> (positional params rendered after self: ``(key, is_index)``, keyword params with
#: defaults, schema argument name of the source tensor)
_SIGS = {
    "index_copy": ((("dim", False), ("index", True)), {}, "source"),
    "index_add": ((("dim", False), ("index", True)), {"alpha": 1}, "source"),
    "index_reduce": ((("dim", False), ("index", True)), {"include_self": True}, "source"),
    "scatter_add": ((("dim", False), ("index", True)), {}, "src"),
    "scatter_reduce": ((("dim", False), ("index", True)), {"include_self": True}, "src"),
    "masked_scatter": ((("mask", True),), {}, "source"),
    "put": ((("index", True),), {"accumulate": False}, "source"),
}
_REDUCES = ("index_reduce", "scatter_reduce")


def _call_args(name: str, t0, p, render: bool):
    """Positional arguments after self (the source tensor marked by None) and keywords."""
    pos, kw, _ = _SIGS[name]
    args = []
    for key, is_index in pos:
        if render:
            args.append(_idx_src(t0, p[key]) if is_index else lit(p[key]))
        else:
            args.append(_idx(t0, p[key]) if is_index else p[key])
    args.append(None)
    if name in _REDUCES:
        args.append(lit(p["reduce"]) if render else p["reduce"])
    kws = {k: p.get(k, v) for k, v in kw.items()}
    if name == "put":  # put's accumulate is positional in Tensor.put_ and torch.put alike
        args.append(lit(kws.pop("accumulate")) if render else kws.pop("accumulate"))
    return args, kws


def _apply(name: str, kind: str):
    def apply(t, p):
        args, kws = _call_args(name, t[0], p, render=False)
        args = [t[1] if a is None else a for a in args]
        if kind == "inplace":
            return getattr(t[0], f"{name}_")(*args, **kws)
        if kind == "out":
            return getattr(torch, name)(t[0], *args, **kws, out=t[2])
        return getattr(torch, name)(t[0], *args, **kws)

    return apply


def _render(name: str, kind: str):
    def render(e, p):
        args, kws = _call_args(name, e[0], p, render=True)
        parts = [e[1] if a is None else a for a in args]
        parts += [f"{k}={lit(v)}" for k, v in kws.items()]
        if kind == "out":
            parts.append(f"out={e[2]}")
        if kind == "inplace":
            return f"{e[0]}.{name}_({', '.join(parts)})"
        return f"torch.{name}({', '.join([e[0], *parts])})"

    return render


def _row(name: str, kind: str, rule, ok, draw, doc: str) -> OpDef:
    inplace = kind == "inplace"
    row = {"inplace": f"{name}_", "functional": name, "out": f"{name}.out"}[kind]
    return OpDef(
        name=row, kind=_KINDS[kind], arity=3 if kind == "out" else 2,
        infer=_infer(name, kind, rule), apply=_apply(name, kind), render=_render(name, kind),
        mutates={"inplace": (0,), "functional": (), "out": (2,)}[kind],
        reads=(1,) if inplace else (0, 1),
        writes=(lambda metas, p: rule(metas[0], metas[1], p)) if inplace else None,
        doc=doc, gen=draw, accepts=ok(kind), tags=frozenset({"group:index"}),
    )


def _family(name: str, rule, ok, draw, doc: str, kinds=("inplace", "functional", "out")):
    return [_row(name, k, rule, ok, draw, f"{doc} ({k})") for k in kinds]


OPS = [
    *_family("index_copy", _dim_rule("index_copy", False), lambda k: gen.ok_dim(k, True),
             gen.gen_dim(distinct=True),
             "x.index_copy_(dim, index, source): index an inline constant of distinct entries"),
    *_family("index_add", _dim_rule("index_add", True), gen.ok_dim, gen.gen_dim(alpha=True),
             "x.index_add_(dim, index, source, alpha=a): repeated indices accumulate"),
    *_family("index_reduce", _dim_rule("index_reduce", True), gen.ok_dim,
             gen.gen_dim(reduce=f.INDEX_REDUCE),
             "x.index_reduce_(dim, index, source, reduce, include_self=b): prod/mean/amax/amin"),
    *_family("scatter_add", _scatter_rule("scatter_add"), gen.ok_scatter, gen.gen_scatter(),
             "x.scatter_add_(dim, index, src): nested inline index, repeats accumulate"),
    *_family("scatter_reduce", _scatter_rule("scatter_reduce"), gen.ok_scatter,
             gen.gen_scatter(f.SCATTER_REDUCE),
             "x.scatter_reduce_(dim, index, src, reduce, include_self=b): sum/prod/mean/amax/amin"),
    *_family("masked_scatter", _masked_rule, gen.ok_mask, gen.gen_mask,
             "x.masked_scatter_(mask, source): inline bool mask broadcast to x",
             kinds=("inplace", "functional")),
    *_family("put", _put_rule, gen.ok_put, gen.gen_put,
             "x.put_(index, source, accumulate): flat inline index over x's logical order",
             kinds=("inplace", "functional")),
]

#: schema bindings (:mod:`.schema`): row -> (overload, tensor arguments bound in order)
SCHEMAS = {
    **{f"{n}_": (f"aten::{n}_" + (".two" if n == "scatter_reduce" else ""), ("self", s))
       for n, (_, _, s) in _SIGS.items()},
    **{n: (f"aten::{n}" + (".two" if n == "scatter_reduce" else ""), ("self", s))
       for n, (_, _, s) in _SIGS.items()},
    **{f"{n}.out": (f"aten::{n}." + ("two_out" if n == "scatter_reduce" else "out"), ("self", s, "out"))
       for n, (_, _, s) in _SIGS.items() if n not in ("masked_scatter", "put")},
}
