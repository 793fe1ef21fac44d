"""``out=`` forms beyond ``add`` / ``mul``: ``cat``, ``stack``, ``sum``, ``index_select``,
``where``, ``clamp``, and the two-output ``max(dim)`` and ``sort``.

As for ``add.out`` (:mod:`.outs`), ``out`` must have exactly the result's shape and dtype, so
no resize ever happens; the result is ``out`` itself (its own strides kept). Tensor
arguments: the inputs, then ``out`` (``cat`` / ``stack`` take one to three inputs).

What shares memory with ``out``:

* ``where`` and ``clamp`` run through TensorIterator: an input read and written whole
  (``out`` is that input) is defined, a partial overlap is the general
  ``partial-read-write-overlap`` rule of validation;
* ``cat`` and ``index_select`` refuse any overlap of ``out`` with an input
  (``at::assert_no_overlap`` in ``cat_out`` / ``index_select_out``), and so does ``infer``;
  for ``stack``, ``sum``, ``max`` and ``sort`` an ``out`` sharing memory with the input is
  not modelled (``infer`` refuses it: their kernels do not check, so it would be undefined);
* ``max(x, dim, keepdim, out=(v, i))`` and ``sort(x, dim, descending, stable=True,
  out=(v, i))`` write ``v`` (a program value) and an ``int64`` index tensor ``i`` allocated
  inline (``torch.empty``), so the family does not wait for int64 program values; both
  results are bound (``v`` itself, ``i`` fresh). ``sort`` is drawn stable: an unstable
  sort's indices of ties are unspecified.

Index constants (``index_select``) and masks (``where``) are parameters rendered inline.
The rows carry the tag ``group:out2`` (one generator slot of the ``out`` family).
"""

from __future__ import annotations

import itertools

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ops._build import fits, lit, scalar_param
from aliasfuzz.fuzz.ops._indexfam import nested_lit
from aliasfuzz.fuzz.ops._inplacegen import as_lists, disjoint
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta, fresh, norm_dim

__all__ = ["OPS", "SCHEMAS"]


def _same_dtype(what: str, out: ValueMeta, *ins: ValueMeta) -> None:
    for m in ins:
        if m.dtype != out.dtype or m.dtype == "bool":
            raise InvalidArgument(f"{what}: inputs and out share one non-bool dtype here, got "
                                  f"{m.dtype} and {out.dtype}")


def _shape(what: str, out: ValueMeta, shape) -> None:
    if out.shape != tuple(shape):
        raise InvalidArgument(f"{what}: out has shape {out.shape}, the result {tuple(shape)} "
                              "(no resizing here)")


def _no_share(what: str, out: ValueMeta, *ins: ValueMeta, aten: bool) -> None:
    if out.has_internal_overlap():
        raise InvalidArgument(f"{what}: more than one element of out refers to a single memory location")
    if any(not disjoint([out, m]) for m in ins):
        why = "ATen refuses it (assert_no_overlap)" if aten else "not modelled"
        raise InvalidArgument(f"{what}: out shares memory with an input: {why}")


# -- rules: (metas, params) -> result metas ------------------------------------------------
def _cat(metas, p, outs):
    *ins, out = metas
    if any(m.ndim == 0 for m in ins):
        raise InvalidArgument("cat: zero-dimensional tensors cannot be concatenated")
    d = norm_dim(p["dim"], ins[0].ndim)
    if any(m.ndim != ins[0].ndim or any(a != b for k, (a, b) in enumerate(zip(m.shape, ins[0].shape, strict=True))
                                         if k != d) for m in ins):
        raise InvalidArgument("cat: sizes of tensors must match except in the cat dim")
    _same_dtype("cat.out", out, *ins)
    shape = list(ins[0].shape)
    shape[d] = sum(m.shape[d] for m in ins)
    _shape("cat.out", out, shape)
    _no_share("cat.out", out, *ins, aten=True)
    return (out,)


def _stack(metas, p, outs):
    *ins, out = metas
    if any(m.shape != ins[0].shape for m in ins):
        raise InvalidArgument("stack expects each tensor to be equal size")
    d = norm_dim(p["dim"], ins[0].ndim + 1)
    _same_dtype("stack.out", out, *ins)
    _shape("stack.out", out, ins[0].shape[:d] + (len(ins),) + ins[0].shape[d:])
    _no_share("stack.out", out, *ins, aten=False)
    return (out,)


def _reduced(x: ValueMeta, p) -> tuple[int, tuple[int, ...]]:
    if x.ndim == 0:
        raise InvalidArgument("reductions over a dim are modelled for tensors with a dim")
    d = norm_dim(p["dim"], x.ndim)
    keep = p.get("keepdim", False)
    if not isinstance(keep, bool):
        raise InvalidArgument("keepdim must be a bool")
    return d, x.shape[:d] + ((1,) if keep else ()) + x.shape[d + 1:]


def _sum(metas, p, outs):
    x, out = metas
    _, shape = _reduced(x, p)
    _same_dtype("sum.out", out, x)
    _shape("sum.out", out, shape)
    _no_share("sum.out", out, x, aten=False)
    return (out,)


def _index_select(metas, p, outs):
    x, out = metas
    if x.ndim == 0:
        raise InvalidArgument("index_select is modelled for tensors with a dim")
    d = norm_dim(p["dim"], x.ndim)
    idx = as_lists(p["index"])
    if not idx or any(not isinstance(i, int) or not 0 <= i < x.shape[d] for i in idx):
        raise InvalidArgument(f"index_select: index {idx} out of range for size {x.shape[d]}")
    _same_dtype("index_select.out", out, x)
    _shape("index_select.out", out, x.shape[:d] + (len(idx),) + x.shape[d + 1:])
    _no_share("index_select.out", out, x, aten=True)
    return (out,)


def _where(metas, p, outs):
    a, b, out = metas
    if a.shape != out.shape or b.shape != out.shape:
        raise InvalidArgument("where.out: a, b and out of one shape are modelled")
    _same_dtype("where.out", out, a, b)
    from aliasfuzz.fuzz.ops._inplacegen import nested_shape

    if out.numel == 0:
        raise InvalidArgument("where.out: an empty out is not modelled (an empty inline mask "
                              "has no bool dtype)")
    if tuple(nested_shape(p["mask"])) != out.shape:
        raise InvalidArgument(f"where.out: the mask must have out's shape {out.shape}")
    if out.has_internal_overlap():
        raise InvalidArgument("where.out: out overlaps itself")
    return (out,)


def _clamp(metas, p, outs):
    x, out = metas
    _same_dtype("clamp.out", out, x)
    _shape("clamp.out", out, x.shape)
    for k in ("min", "max"):
        v = scalar_param(p, k)
        if isinstance(v, float) and not x.is_float or not fits(v, x.dtype):
            raise InvalidArgument(f"clamp.out: bound {v} on {x.dtype} is not modelled")
    if out.has_internal_overlap():
        raise InvalidArgument("clamp.out: out overlaps itself")
    return (out,)


def _two_out(what: str):
    def infer(metas, p, outs):
        x, v = metas
        d, shape = _reduced(x, p) if what == "max" else (norm_dim(p["dim"], max(x.ndim, 1)), x.shape)
        if x.ndim == 0 or x.shape[d] == 0:
            raise InvalidArgument(f"{what}: a non-empty dim is modelled")
        if what == "sort" and not isinstance(p.get("descending", False), bool):
            raise InvalidArgument("sort: descending must be a bool")
        _same_dtype(f"{what}.out", v, x)
        _shape(f"{what}.out", v, shape)
        _no_share(f"{what}.out", v, x, aten=False)
        return (v, fresh(outs[1] if len(outs) > 1 else "_i", shape, "int64"))

    return infer


# -- parameters -----------------------------------------------------------------------------
def _fits(infer, metas, p) -> bool:
    try:
        infer(metas, p, ("_a", "_b"))
    except InvalidArgument:
        return False
    return True


def _pick(infer, candidates):
    """``gen`` and ``accepts`` from a row's rule and its candidate parameters."""
    def options(metas):
        return [c for c in candidates(metas) if _fits(infer, metas, c)]

    def gen(draw, metas):
        ok = options(metas)
        if not ok:
            raise GenerationFailure("no parameters fit these arguments")
        return draw.choice(ok)

    return gen, lambda metas: bool(options(metas))


def _dims(metas, extra=0):
    return [{"dim": d} for d in range(metas[0].ndim + extra)]


def _dims_keep(metas):
    return [{"dim": d, "keepdim": k} for d in range(metas[0].ndim) for k in (False, True)]


def _select_candidates(metas):
    # index of out's length along each dim; the values are drawn by the row's gen
    x, out = metas
    return [{"dim": d, "index": [0] * out.shape[d]} for d in range(min(x.ndim, out.ndim))
            if out.ndim == x.ndim and out.shape[d] >= 1 and x.shape[d] >= 1]


def _gen_select(draw, metas):
    gen, _ = _pick(_index_select, _select_candidates)
    p = gen(draw, metas)
    n = metas[0].shape[p["dim"]]
    return {"dim": p["dim"], "index": [draw.integer(0, n - 1) for _ in p["index"]]}


def _gen_where(draw, metas):
    out = metas[-1]
    cells = [draw.boolean() for _ in itertools.product(*(range(n) for n in out.shape))]
    it = iter(cells)

    def build(depth):
        return next(it) if depth == out.ndim else [build(depth + 1) for _ in range(out.shape[depth])]

    return {"mask": build(0)}


def _where_ok(metas) -> bool:
    a, b, out = metas
    return (a.shape == b.shape == out.shape and a.dtype == b.dtype == out.dtype != "bool"
            and not out.has_internal_overlap() and 0 < out.numel <= 64)


def _gen_clamp(draw, metas):
    x = metas[0]
    lo = draw.scalar(x.dtype)
    hi = draw.scalar(x.dtype)
    return {"min": min(lo, hi), "max": max(lo, hi)}


def _sort_candidates(metas):
    return [{"dim": d, "descending": b} for d in range(metas[0].ndim) for b in (False, True)]


# -- rendering --------------------------------------------------------------------------------
def _idx(e0: str, v) -> str:
    return f"torch.tensor({nested_lit(v)}, device={e0}.device)"


def _max_apply(t, p):
    i = torch.empty(t[1].shape, dtype=torch.int64, device=t[0].device)  # v has the reduced shape
    return tuple(torch.max(t[0], p["dim"], keepdim=p.get("keepdim", False), out=(t[1], i)))


def _sort_apply(t, p):
    i = torch.empty(t[0].shape, dtype=torch.int64, device=t[0].device)
    return tuple(torch.sort(t[0], dim=p["dim"], descending=p.get("descending", False), stable=True,
                            out=(t[1], i)))


def _out_row(name, arity, infer, apply, render, doc, gen, accepts, reads, **kw) -> OpDef:
    return OpDef(name=name, kind=OpKind.OUT, arity=arity, infer=infer, apply=apply, render=render,
                 doc=doc, gen=gen, accepts=accepts, reads=reads,
                 tags=frozenset({"group:out2"}) | kw.pop("tags", frozenset()), **kw)


def _variadic(name: str, infer, fn, extra: int):
    gen, ok = _pick(infer, lambda metas: _dims(metas, extra))
    return _out_row(
        f"{name}.out", (2, 4), infer,
        lambda t, p: fn(list(t[:-1]), p["dim"], out=t[-1]),
        lambda e, p: f"torch.{name}([{', '.join(e[:-1])}], {p['dim']}, out={e[-1]})",
        f"torch.{name}(tensors, dim, out=o): o of exactly the result's shape", gen, ok,
        None, mutates=(-1,),
    )


_sum_gen, _sum_ok = _pick(_sum, _dims_keep)
_max_gen, _max_ok = _pick(_two_out("max"), _dims_keep)
_sort_gen, _sort_ok = _pick(_two_out("sort"), _sort_candidates)

OPS = [
    _variadic("cat", _cat, torch.cat, 0),
    _variadic("stack", _stack, torch.stack, 1),
    _out_row("sum.out", 2, _sum,
             lambda t, p: torch.sum(t[0], p["dim"], keepdim=p.get("keepdim", False), out=t[1]),
             lambda e, p: f"torch.sum({e[0]}, {p['dim']}, keepdim={p.get('keepdim', False)}, out={e[1]})",
             "torch.sum(x, dim, keepdim, out=o): o of x's dtype and the reduced shape",
             _sum_gen, _sum_ok, (0,), mutates=(1,)),
    _out_row("index_select.out", 2, _index_select,
             lambda t, p: torch.index_select(t[0], p["dim"], torch.tensor(list(p["index"]), device=t[0].device),
                                             out=t[1]),
             lambda e, p: f"torch.index_select({e[0]}, {p['dim']}, {_idx(e[0], p['index'])}, out={e[1]})",
             "torch.index_select(x, dim, index, out=o): inline index, repeats allowed",
             _gen_select, _pick(_index_select, _select_candidates)[1], (0,), mutates=(1,)),
    _out_row("where.out", 3, _where,
             lambda t, p: torch.where(torch.tensor(as_lists(p["mask"]), device=t[0].device), t[0], t[1],
                                      out=t[2]),
             lambda e, p: f"torch.where({_idx(e[0], p['mask'])}, {e[0]}, {e[1]}, out={e[2]})",
             "torch.where(mask, a, b, out=o): inline bool mask of o's shape", _gen_where, _where_ok,
             (0, 1), mutates=(2,)),
    _out_row("clamp.out", 2, _clamp,
             lambda t, p: torch.clamp(t[0], p["min"], p["max"], out=t[1]),
             lambda e, p: f"torch.clamp({e[0]}, {lit(p['min'])}, {lit(p['max'])}, out={e[1]})",
             "torch.clamp(x, min, max, out=o): scalar bounds",
             _gen_clamp, lambda metas: _fits(_clamp, metas, {"min": 0, "max": 1}), (0,), mutates=(1,)),
    _out_row("max.dim_max", 2, _two_out("max"), _max_apply,
             lambda e, p: (f"torch.max({e[0]}, {p['dim']}, keepdim={p.get('keepdim', False)}, out=({e[1]}, "
                           f"torch.empty({e[1]}.shape, dtype=torch.int64, device={e[0]}.device)))"),
             "torch.max(x, dim, keepdim, out=(v, i)): v a program value, i a fresh int64 tensor",
             _max_gen, _max_ok, (0,), mutates=(1,), n_out=2, scriptable=False),
    _out_row("sort.values_stable", 2, _two_out("sort"), _sort_apply,
             lambda e, p: (f"torch.sort({e[0]}, dim={p['dim']}, descending={p.get('descending', False)}, "
                           f"stable=True, out=({e[1]}, torch.empty({e[0]}.shape, dtype=torch.int64, "
                           f"device={e[0]}.device)))"),
             "torch.sort(x, dim, descending, stable=True, out=(v, i)): v a program value, i fresh int64",
             _sort_gen, _sort_ok, (0,), mutates=(1,), n_out=2, scriptable=False),
]

#: schema bindings (:mod:`.schema`)
SCHEMAS = {
    "cat.out": ("aten::cat.out", None),
    "stack.out": ("aten::stack.out", None),
    "sum.out": ("aten::sum.IntList_out", None),
    "index_select.out": ("aten::index_select.out", ("self", "out")),
    "where.out": ("aten::where.self_out", ("self", "other", "out")),
    "clamp.out": ("aten::clamp.out", None),
    "max.dim_max": ("aten::max.dim_max", ("self", "max")),
    "sort.values_stable": ("aten::sort.values_stable", ("self", "values")),
}
