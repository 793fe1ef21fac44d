"""In-place ops: write into their first argument and return it (setitem returns nothing).

Footprints: ``mutates`` names the written argument; ``writes`` narrows it where the op
writes only part of it (``index_put_`` rows, ``index_fill_`` slices, ``scatter_``
elements, setitem's indexed view); ``reads`` lists the other arguments read (an op's own
read-modify-write of the elements it writes is not listed).

Index tensors (``index_put_``, ``index_fill_``, ``scatter_``) are parameters rendered
inline as ``torch.tensor([...])`` constants, not program values: their content decides
the footprint, so the generator and the alias model must see it. For hand-written
programs whose indices are program values (``x[rows] = vals``), :mod:`._advindex` adds
``index_put_.Tensor`` and ``setitem_tensor`` with a whole-tensor footprint and no ``gen``. Calls whose eager
result would depend on iteration order (duplicate targets with different values) are
rejected by ``infer``, as are what PyTorch rejects.
"""

from __future__ import annotations

import itertools

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops import _inplacegen as g
from aliasfuzz.fuzz.ops._advindex import ADV_OPS
from aliasfuzz.fuzz.ops._build import (
    can_cast,
    fits,
    inplace_infer,
    int_list_lit,
    lit,
    no_bool,
    result_dtype,
    scalar_param,
)
from aliasfuzz.fuzz.ops._indexing import index_layout, py_index, render_index
from aliasfuzz.fuzz.ops.core import (
    NoEagerMeaning,
    OpDef,
    OpKind,
    ValueMeta,
    broadcast_shapes,
    norm_dim,
)

__all__ = ["OPS"]


def _overlaps(a: ValueMeta, b: ValueMeta) -> bool:
    return a.storage == b.storage and bool(a.byte_footprint() & b.byte_footprint())


def _no_internal_overlap(m: ValueMeta, what: str) -> None:
    if m.has_internal_overlap():
        raise InvalidArgument(f"{what}: more than one element of the written-to tensor refers to a single memory location")


def _sub_check(metas, p):
    if any(m.dtype == "bool" for m in metas) or isinstance(p.get("other"), bool):
        raise InvalidArgument("subtraction with a bool tensor is not supported")


def _inplace(check=None):
    def infer(metas, p, outs):
        if check:
            check(metas, p)
        return inplace_infer(metas, p, outs)

    return infer


def _copy_infer(metas, p, outs):
    self, src = metas
    if broadcast_shapes(self.shape, src.shape) != self.shape:
        raise InvalidArgument(f"copy_: source shape {src.shape} does not broadcast to {self.shape}")
    return (self,)


def _fill_infer(metas, p, outs):
    _value_param(p, metas[0].dtype)
    return (metas[0],)


def _clamp_infer(metas, p, outs):
    m = metas[0]
    lo, hi = p.get("min"), p.get("max")
    if lo is None and hi is None:
        raise InvalidArgument("clamp: at least one of 'min' or 'max' must not be None")
    bounds = [scalar_param(p, k) for k in ("min", "max") if p.get(k) is not None]
    dt = m.dtype
    for b in bounds:
        dt = result_dtype([ValueMeta(m.shape, m.stride, 0, dt, "", 0)], b)
    if not can_cast(dt, m.dtype) or m.dtype == "bool":
        raise InvalidArgument(f"clamp_: result type {dt} can't be cast to {m.dtype}")
    if not all(fits(b, m.dtype) for b in bounds):
        raise InvalidArgument(f"clamp_: a bound cannot be converted to {m.dtype} without overflow")
    return (m,)


def _neg_infer(metas, p, outs):
    no_bool(metas[0], "negation")
    return (metas[0],)


def _addcmul_infer(metas, p, outs):
    for m in metas:
        no_bool(m, "addcmul_")
    scalar_param(p, "value")
    return inplace_infer(metas, {}, outs)


# -- advanced-index writes ---------------------------------------------------------------


def _index_rows(m: ValueMeta, p) -> list[tuple[int, ...]]:
    idx = p["indices"]
    if not isinstance(idx, list | tuple) or not idx or len(idx) > m.ndim:
        raise InvalidArgument(f"index_put_: expected 1..{m.ndim} index lists, got {idx!r}")
    lists = [g.int_list(x, "index_put_ index") for x in idx]
    if len({len(x) for x in lists}) != 1 or not lists[0]:
        raise InvalidArgument("index_put_: index lists must be non-empty and of one length")
    rows = []
    for tup in zip(*lists, strict=True):
        for d, i in enumerate(tup):
            if not -m.shape[d] <= i < m.shape[d]:
                raise InvalidArgument(f"index {i} is out of bounds for dimension {d} with size {m.shape[d]}")
        rows.append(tuple(i % m.shape[d] for d, i in enumerate(tup)))
    return rows


def _index_put_infer(metas, p, outs):
    self, values = metas
    rows = _index_rows(self, p)
    if values.dtype != self.dtype:
        raise InvalidArgument(f"index_put_ requires equal dtypes, got {self.dtype} and {values.dtype}")
    target = (len(rows),) + self.shape[len(rows[0]) :]
    if broadcast_shapes(values.shape, target) != target:
        raise InvalidArgument(f"shape mismatch: values of shape {values.shape} cannot be broadcast to {target}")
    if not p.get("accumulate", False) and len(set(rows)) != len(rows):
        raise NoEagerMeaning("duplicate-index-writes", "one element is written twice by one op "
                             "(order undefined)", "index_put_ with repeated indices and accumulate=False")
    _no_internal_overlap(self, "index_put_")
    if _overlaps(self, values):
        raise InvalidArgument("index_put_: values overlap the written-to tensor")
    return (self,)


def _index_put_writes(metas, p):
    return [index_layout(metas[0], list(r)) if len(r) else metas[0] for r in _index_rows(metas[0], p)]


def _index_fill_parts(m: ValueMeta, p) -> list[ValueMeta]:
    if m.ndim == 0:
        raise InvalidArgument("index_fill_ is modelled for tensors with at least one dim")
    d = norm_dim(p["dim"], m.ndim)
    idx = g.int_list(p["index"], "index_fill_ index")
    n = m.shape[d]
    if not idx or any(not -n <= i < n for i in idx):
        raise InvalidArgument(f"index_fill_: indices {list(idx)} out of range for size {n}")
    return [index_layout(m, [[None, None, None]] * d + [i]) for i in sorted({i % n for i in idx})]


def _index_fill_infer(metas, p, outs):
    _index_fill_parts(metas[0], p)
    _no_internal_overlap(metas[0], "index_fill_")
    _value_param(p, metas[0].dtype)
    return (metas[0],)


def _masked_fill_infer(metas, p, outs):
    self, mask = metas
    if mask.dtype != "bool":
        raise InvalidArgument(f"masked_fill_ only supports boolean masks, got {mask.dtype}")
    if broadcast_shapes(self.shape, mask.shape) != self.shape:
        raise InvalidArgument(f"masked_fill_: mask {mask.shape} does not broadcast to {self.shape}")
    _value_param(p, self.dtype)
    return (self,)


def _scatter_targets(m: ValueMeta, p, src: ValueMeta | None) -> list[tuple[int, ...]]:
    d = norm_dim(p["dim"], m.ndim)
    index = p["index"]
    shape = g.nested_shape(index)
    if m.ndim == 0 or len(shape) != m.ndim or 0 in shape:
        raise InvalidArgument("scatter_: index must be a non-empty nested list with self's ndim")
    for k in range(m.ndim):
        if (k != d and shape[k] > m.shape[k]) or (src is not None and shape[k] > src.shape[k]):
            raise InvalidArgument(f"scatter_: index size {shape[k]} too large at dim {k}")
    targets = []
    for pos in itertools.product(*(range(n) for n in shape)):
        v = index
        for i in pos:
            v = v[i]
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < m.shape[d]:
            raise InvalidArgument(f"scatter_: index {v!r} out of bounds for size {m.shape[d]}")
        targets.append(pos[:d] + (v,) + pos[d + 1 :])
    return targets


def _scatter_infer(metas, p, outs):
    self = metas[0]
    src = metas[1] if len(metas) > 1 else None
    targets = _scatter_targets(self, p, src)
    _no_internal_overlap(self, "scatter_")
    if src is None:
        _value_param(p, self.dtype)
        return (self,)
    if src.dtype != self.dtype:
        raise InvalidArgument(f"scatter(): expected self.dtype {self.dtype} to equal src.dtype {src.dtype}")
    if len(set(targets)) != len(targets):
        raise NoEagerMeaning("duplicate-index-writes", "one element is written twice by one op "
                             "(order undefined)", "scatter_ with repeated targets")
    if _overlaps(self, src):
        raise InvalidArgument("scatter_: src overlaps the written-to tensor")
    return (self,)


def _scatter_writes(metas, p):
    m = metas[0]
    src = metas[1] if len(metas) > 1 else None
    return [m.view((), (), m.offset + sum(i * s for i, s in zip(t, m.stride, strict=True)))
            for t in _scatter_targets(m, p, src)]


# -- setitem -------------------------------------------------------------------------


def _setitem_infer(aug: bool):
    def infer(metas, p, outs):
        target = index_layout(metas[0], p["idx"])
        _no_internal_overlap(target, "setitem")
        if len(metas) > 1:
            y = metas[1]
            if aug:
                inplace_infer([target, y], {}, outs)
            else:
                # copy_to strips the value's leading size-1 dims (slicePrefix1sSize).
                shape = y.shape
                while shape and shape[0] == 1 and len(shape) > len(target.shape):
                    shape = shape[1:]
                if broadcast_shapes(shape, target.shape) != target.shape:
                    raise InvalidArgument(f"setitem: value shape {y.shape} does not broadcast to {target.shape}")
        else:
            v = _value_param(p, metas[0].dtype)
            if aug:
                inplace_infer([target], {"other": v}, outs)
        return ()

    return infer


def _setitem_apply(aug: bool):
    def apply(t, p):
        idx = py_index(p["idx"])
        v = t[1] if len(t) > 1 else p["value"]
        if aug:
            view = t[0][idx]
            view += v
            t[0][idx] = view
        else:
            t[0][idx] = v

    return apply


def _setitem_render(aug: bool):
    def render(e, p):
        v = e[1] if len(e) > 1 else lit(p["value"])
        return f"{e[0]}[{render_index(p['idx'])}] {'+=' if aug else '='} {v}"

    return render


def _setitem_rows() -> list[OpDef]:
    rows = []
    for aug in (False, True):
        for scalar in (False, True):
            name = "setitem" + ("_iadd" if aug else "") + (".Scalar" if scalar else "")
            rows.append(OpDef(
                name=name, kind=OpKind.INPLACE, arity=1 if scalar else 2,
                infer=_setitem_infer(aug), apply=_setitem_apply(aug), render=_setitem_render(aug),
                mutates=(0,), reads=() if scalar else (1,), n_out=0, statement=True,
                writes=lambda metas, p: [index_layout(metas[0], p["idx"])],
                doc=f"x[idx] {'+=' if aug else '='} {'scalar' if scalar else 'y'} (basic indexing)",
                gen=g.gen_setitem(aug, scalar), accepts=g.ok_setitem(aug, scalar),
            ))
    return rows


def _foreach_infer(metas, p, outs):
    scalar_param(p, "other")
    for m in metas:
        inplace_infer([m], p, outs)
    return ()


def _index_put_render(e, p) -> str:
    idx = ", ".join(f"torch.tensor({int_list_lit(i)}, device={e[0]}.device)" for i in p["indices"])
    idx = f"({idx},)" if len(p["indices"]) == 1 else f"({idx})"
    return f"{e[0]}.index_put_({idx}, {e[1]}, accumulate={bool(p.get('accumulate', False))})"


def _value_param(p, dtype: str):
    v = scalar_param(p, "value")
    if not fits(v, dtype):
        raise InvalidArgument(f"value {v} cannot be converted to {dtype} without overflow")
    return v


def _row(name, arity, infer, apply, render, doc, **kw) -> OpDef:
    kw.setdefault("mutates", (0,))
    # Writing a self-overlapping tensor is an error in PyTorch (and in validate).
    ok = kw.get("accepts")
    kw["accepts"] = lambda metas, ok=ok: not metas[0].has_internal_overlap() and (ok is None or ok(metas))
    return OpDef(name=name, kind=OpKind.INPLACE, arity=arity, infer=infer, apply=apply,
                 render=render, doc=doc, **kw)


def _binary_rows(name: str, check=None, kinds=("int64", "float32")) -> list[OpDef]:
    return [
        _row(name, 2, _inplace(check), lambda t, p, n=name: getattr(t[0], n)(t[1]),
             lambda e, p, n=name: f"{e[0]}.{n}({e[1]})", f"x.{name}(y): y broadcasts to x",
             gen=lambda draw, metas: {}, accepts=g.ok_inplace(check)),
        _row(f"{name}.Scalar", 1, _inplace(check), lambda t, p, n=name: getattr(t[0], n)(p["other"]),
             lambda e, p, n=name: f"{e[0]}.{n}({lit(p['other'])})", f"x.{name}(scalar)",
             gen=g.gen_inplace_scalar(kinds), accepts=g.ok_scalar_inplace(check)),
    ]


OPS = [
    *_binary_rows("add_"),
    *_binary_rows("mul_"),
    *_binary_rows("sub_", _sub_check, ("int64", "float32")),
    _row("copy_", 2, _copy_infer, lambda t, p: t[0].copy_(t[1]), lambda e, p: f"{e[0]}.copy_({e[1]})",
         "x.copy_(src): src broadcasts to x, any dtype cast", reads=(1,),
         gen=lambda draw, metas: {}, accepts=g.ok_copy),
    _row("zero_", 1, lambda m, p, o: (m[0],), lambda t, p: t[0].zero_(), lambda e, p: f"{e[0]}.zero_()",
         "x.zero_()", reads=(), gen=lambda draw, metas: {}),
    _row("fill_", 1, _fill_infer, lambda t, p: t[0].fill_(p["value"]),
         lambda e, p: f"{e[0]}.fill_({lit(p['value'])})", "x.fill_(scalar) (casts any number)",
         reads=(), gen=g.gen_value),
    _row("clamp_", 1, _clamp_infer, lambda t, p: t[0].clamp_(p.get("min"), p.get("max")),
         lambda e, p: f"{e[0]}.clamp_({lit(p.get('min'))}, {lit(p.get('max'))})",
         "x.clamp_(min, max) (either may be None)", gen=g.gen_clamp,
         accepts=lambda metas: metas[0].dtype != "bool"),
    _row("neg_", 1, _neg_infer, lambda t, p: t[0].neg_(), lambda e, p: f"{e[0]}.neg_()",
         "x.neg_() (not bool)", gen=lambda draw, metas: {},
         accepts=lambda metas: metas[0].dtype != "bool"),
    _row("addcmul_", 3, _addcmul_infer,
         lambda t, p: t[0].addcmul_(t[1], t[2], value=p.get("value", 1)),
         lambda e, p: f"{e[0]}.addcmul_({e[1]}, {e[2]}, value={lit(p.get('value', 1))})",
         "x.addcmul_(t1, t2, value): x += value * t1 * t2", gen=g.gen_addcmul, accepts=g.ok_addcmul),
    _row("index_put_", 2, _index_put_infer,
         lambda t, p: t[0].index_put_(tuple(torch.tensor(list(i), device=t[0].device) for i in p["indices"]), t[1],
                                      accumulate=bool(p.get("accumulate", False))),
         _index_put_render,
         "x.index_put_((idx0, ...), values, accumulate): indices are inline constants",
         reads=(1,), writes=_index_put_writes, gen=g.gen_index_put, accepts=g.ok_index_put),
    _row("index_fill_", 1, _index_fill_infer,
         lambda t, p: t[0].index_fill_(p["dim"], torch.tensor(list(p["index"]), device=t[0].device), p["value"]),
         lambda e, p: f"{e[0]}.index_fill_({p['dim']}, torch.tensor({int_list_lit(p['index'])}, device={e[0]}.device), {lit(p['value'])})",
         "x.index_fill_(dim, index, value): index is an inline constant", reads=(),
         writes=lambda metas, p: _index_fill_parts(metas[0], p), gen=g.gen_index_fill,
         accepts=g.has_rows),
    _row("masked_fill_", 2, _masked_fill_infer, lambda t, p: t[0].masked_fill_(t[1], p["value"]),
         lambda e, p: f"{e[0]}.masked_fill_({e[1]}, {lit(p['value'])})",
         "x.masked_fill_(mask, value): bool mask broadcasts to x; writes all of x (data-dependent)",
         reads=(1,), gen=g.gen_value, accepts=g.ok_masked_fill, tags=frozenset({"data_dependent"})),
    _row("scatter_", 2, _scatter_infer,
         lambda t, p: t[0].scatter_(p["dim"], torch.tensor(g.as_lists(p["index"]), device=t[0].device), t[1]),
         lambda e, p: f"{e[0]}.scatter_({p['dim']}, torch.tensor({int_list_lit(p['index'])}, device={e[0]}.device), {e[1]})",
         "x.scatter_(dim, index, src): index is an inline constant; targets are distinct",
         reads=(1,), writes=_scatter_writes, gen=g.gen_scatter(False), accepts=g.ok_scatter),
    _row("scatter_.value", 1, _scatter_infer,
         lambda t, p: t[0].scatter_(p["dim"], torch.tensor(g.as_lists(p["index"]), device=t[0].device), p["value"]),
         lambda e, p: f"{e[0]}.scatter_({p['dim']}, torch.tensor({int_list_lit(p['index'])}, device={e[0]}.device), {lit(p['value'])})",
         "x.scatter_(dim, index, value)", reads=(), writes=_scatter_writes,
         gen=g.gen_scatter(True), accepts=g.has_rows),
    *_setitem_rows(),
    *ADV_OPS,
    OpDef(name="_foreach_add_.Scalar", kind=OpKind.INPLACE, arity=(1, 4), infer=_foreach_infer,
          apply=lambda t, p: torch._foreach_add_(list(t), p["other"]),
          render=lambda e, p: f"torch._foreach_add_([{', '.join(e)}], {lit(p['other'])})",
          mutates=None, reads=None, n_out=0, doc="torch._foreach_add_(tensors, scalar): returns None",
          gen=g.gen_foreach, accepts=g.ok_foreach),
]
