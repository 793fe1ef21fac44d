"""Windowed and raw-strided views: ``unfold``, ``movedim``, ``as_strided_copy``,
``as_strided_scatter``.

* ``x.unfold(dim, size, step)`` (view): windows of ``size`` along ``dim`` every ``step``;
  ``step > size`` leaves gaps, ``step < size`` makes windows overlap. The layout is
  ``at::native::unfold`` (``TensorShape.cpp``): ``dim`` gets ``(n - size) // step + 1``
  windows of stride ``stride[dim] * step``, and a trailing dim of ``size`` with stride
  ``stride[dim]``. A write through overlapping windows maps two indices to one element:
  the general ``self-overlapping-write`` rule of validation rejects it (no check here).
* ``x.movedim(source, destination)`` (view): a permutation (``at::native::movedim``).
* ``torch.as_strided_copy(x, size, stride, offset)`` (functional): ``x.as_strided(...)``
  cloned contiguous (the generated ``as_strided_copy`` kernel). Its offset and strides are
  absolute in ``x``'s storage, so it follows the ``as_strided`` view's ``layout-readout``
  contract (:mod:`aliasfuzz.fuzz.layout_contract`: no element outside ``x``, not after
  ``x``'s storage was written).
* ``torch.as_strided_scatter(x, src, size, stride, offset)`` (scatter): a copy of ``x``
  (``clone_preserve_strides``: ``x``'s strides and offset on a copy of its whole storage)
  with ``src`` copied into ``copy.as_strided(size, stride, offset)``. Inductor lowers it as
  ``clone`` (a layout of its choosing, offset 0) then ``as_strided``, so the absolute
  positions mean the same only when ``x`` is contiguous from storage offset 0 and the
  window stays inside ``x``: anything else is ``layout-readout`` (no contract promises the
  copy's layout). An overlapping window is refused (``copy_`` into it has no meaning).

``diagonal`` with offsets and ``view(dtype)`` across item sizes both ways are rows of
:mod:`.views` already.
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.layout_contract import LAYOUT_READOUT, storage_elements
from aliasfuzz.fuzz.ops import _viewgen as vg
from aliasfuzz.fuzz.ops.core import NoEagerMeaning, OpDef, OpKind, ValueMeta, fresh, norm_dim
from aliasfuzz.fuzz.ops.outs import _preserved
from aliasfuzz.fuzz.ops.views import _as_strided, _int, _ints, _permuted

__all__ = ["OPS", "SCHEMAS"]


# -- unfold -------------------------------------------------------------------------------
def _unfold(metas, p, outs):
    (m,) = metas
    if m.ndim == 0:
        raise InvalidArgument("unfold of a 0-d tensor is not modelled")
    d = norm_dim(p["dim"], m.ndim)
    size, step = _int(p["size"], "unfold size"), _int(p["step"], "unfold step")
    if step <= 0:
        raise InvalidArgument(f"step is {step} but must be > 0")
    if not 0 <= size <= m.shape[d]:
        raise InvalidArgument(f"maximum size for tensor at dimension {d} is {m.shape[d]} but size is {size}")
    shape, stride = list(m.shape), list(m.stride)
    shape[d] = (m.shape[d] - size) // step + 1
    stride[d] = m.stride[d] * step
    return (m.view([*shape, size], [*stride, m.stride[d]], m.offset),)


def _gen_unfold(draw, metas) -> dict:
    m = metas[0]
    dims = [d for d in range(m.ndim) if m.shape[d] >= 1]
    if not dims:
        raise GenerationFailure("unfold needs a non-empty dim")
    d = draw.choice(dims)
    n = m.shape[d]
    size = draw.integer(1, n)
    # step == size tiles; rarer: gaps (step > size) and overlapping windows (step < size)
    kind = draw.choice(["tile", "gap", "overlap"])
    if kind == "gap":
        step = draw.integer(size + 1, n + 1)
    elif kind == "overlap" and size > 1:
        step = draw.integer(1, size - 1)
    else:
        step = size
    return {"dim": d, "size": size, "step": step}


# -- movedim ------------------------------------------------------------------------------
def _movedim_perm(ndim: int, p) -> list[int]:
    src, dst = p["source"], p["destination"]
    one = isinstance(src, int) and not isinstance(src, bool)
    src = [src] if one else list(_ints(src, "movedim source"))
    dst = [dst] if one else list(_ints(dst, "movedim destination"))
    if len(src) != len(dst):
        raise InvalidArgument(f"movedim: Invalid source or destination dims: source ({src}) and "
                              f"destination ({dst}) must have the same number of elements")
    src = [norm_dim(s, ndim, "movedim source") for s in src]
    dst = [norm_dim(s, ndim, "movedim destination") for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise InvalidArgument("movedim: repeated dim in source or destination")
    perm: list[int | None] = [None] * ndim
    for s, t in zip(src, dst, strict=True):
        perm[t] = s
    rest = iter(i for i in range(ndim) if i not in src)
    return [next(rest) if x is None else x for x in perm]


def _movedim(metas, p, outs):
    (m,) = metas
    return (_permuted(m, _movedim_perm(m.ndim, p)),)


def _gen_movedim(draw, metas) -> dict:
    n = metas[0].ndim
    if n == 0:
        raise GenerationFailure("movedim of a 0-d tensor moves nothing")
    if draw.boolean(0.6):
        return {"source": draw.integer(0, n - 1), "destination": draw.integer(0, n - 1)}
    k = draw.integer(1, n)
    pool, src = list(range(n)), []
    for _ in range(k):
        src.append(draw.choice(pool))
        pool.remove(src[-1])
    pool, dst = list(range(n)), []
    for _ in range(k):
        dst.append(draw.choice(pool))
        pool.remove(dst[-1])
    return {"source": src, "destination": dst}


def _dims_lit(v) -> str:
    return str(v) if isinstance(v, int) else "[" + ", ".join(str(int(x)) for x in v) + "]"


def _dims_arg(v):
    return v if isinstance(v, int) else list(v)


# -- as_strided_copy / as_strided_scatter -------------------------------------------------
def _strided_args(p) -> tuple[list[int], list[int], int]:
    return (list(_ints(p["size"], "size")), list(_ints(p["stride"], "stride")),
            _int(p["offset"], "storage offset"))


def _as_strided_copy(metas, p, outs):
    (view,) = _as_strided(metas, p, outs)
    return (fresh(outs[0], view.shape, view.dtype),)


def _readout(detail: str) -> NoEagerMeaning:
    return NoEagerMeaning(LAYOUT_READOUT, f"{LAYOUT_READOUT}: as_strided_scatter {detail}")


def _window(self: ValueMeta, p) -> ValueMeta:
    """The window of ``as_strided_scatter`` on ``self``'s storage, within the contract."""
    (w,) = _as_strided((self,), p, ())
    if self.offset != 0 or not self.is_contiguous():
        raise _readout("of a tensor that is not contiguous from storage offset 0: the window's "
                       "absolute offset and strides address the copy's layout, which compiled "
                       "code chooses (Inductor lowers it as clone then as_strided)")
    mine, reached = storage_elements(self), storage_elements(w)
    if mine is None or reached is None:
        raise InvalidArgument("as_strided_scatter: too large to check element by element")
    if reached - mine:
        raise _readout(f"window reaches element {min(reached - mine)}, outside its input: "
                       "the copy compiled code makes has only the input's elements")
    if w.has_internal_overlap():
        raise InvalidArgument("as_strided_scatter: the window maps two indices to one element "
                              "(copy_ into it has no single meaning)")
    return w


def _as_strided_scatter(metas, p, outs):
    self, src = metas
    w = _window(self, p)
    if w.shape != src.shape:
        raise InvalidArgument(f"expected src to have a size equal to the slice of self: src "
                              f"{src.shape}, slice {w.shape}")
    if src.dtype != self.dtype:
        raise InvalidArgument(f"as_strided_scatter: src ({src.dtype}) must have self's dtype "
                              f"({self.dtype}) here (copy_'s cast is not modelled)")
    return (_preserved(self, outs[0]),)


def _scatter_ok(metas) -> bool:
    self, src = metas
    return (self.offset == 0 and self.numel > 0 and self.is_contiguous() and src.dtype == self.dtype
            and src.ndim <= 3 and 0 < src.numel <= self.numel)


def _gen_scatter(draw, metas) -> dict:
    """A window of ``src``'s shape inside ``self`` (contiguous from 0), not overlapping
    itself: strides drawn from dense orders and steps, offset within range."""
    self, src = metas
    for _ in range(8):
        order = list(range(src.ndim))
        if draw.boolean(0.3):
            order.reverse()
        stride, acc = [0] * src.ndim, 1
        for d in reversed(order):
            stride[d] = acc * (2 if draw.boolean(0.2) else 1)
            acc = stride[d] * src.shape[d]
        span = 1 + sum((n - 1) * s for n, s in zip(src.shape, stride, strict=True))
        if span > self.numel:
            continue
        p = {"size": list(src.shape), "stride": stride, "offset": draw.integer(0, self.numel - span)}
        try:
            _window(self, p)
        except InvalidArgument:
            continue
        return p
    raise GenerationFailure("no window of src's shape fits self")


def _strided_lit(p) -> str:
    return f"{vg.shape_lit(p['size'])}, {vg.shape_lit(p['stride'])}, {int(p['offset'])}"


OPS = [
    OpDef(name="unfold", kind=OpKind.VIEW, arity=1, infer=_unfold,
          apply=lambda t, p: t[0].unfold(p["dim"], p["size"], p["step"]),
          render=lambda e, p: f"{e[0]}.unfold({p['dim']}, {p['size']}, {p['step']})",
          doc="x.unfold(dim, size, step): windows with gaps (step > size) or overlapping "
          "(step < size); writes through overlapping windows are self-overlapping-write",
          gen=_gen_unfold, accepts=lambda metas: metas[0].ndim >= 1 and metas[0].numel > 0),
    OpDef(name="movedim", kind=OpKind.VIEW, arity=1, infer=_movedim,
          apply=lambda t, p: t[0].movedim(_dims_arg(p["source"]), _dims_arg(p["destination"])),
          render=lambda e, p: f"{e[0]}.movedim({_dims_lit(p['source'])}, {_dims_lit(p['destination'])})",
          doc="x.movedim(source, destination): ints or lists of dims; a permutation",
          gen=_gen_movedim, accepts=lambda metas: metas[0].ndim >= 1),
    OpDef(name="as_strided_copy", kind=OpKind.FUNCTIONAL, arity=1, infer=_as_strided_copy,
          apply=lambda t, p: torch.as_strided_copy(t[0], *_strided_args(p)),
          render=lambda e, p: f"torch.as_strided_copy({e[0]}, {_strided_lit(p)})",
          doc="torch.as_strided_copy(x, size, stride, offset): a fresh contiguous copy of the "
          "as_strided view (the as_strided layout-readout contract applies)",
          gen=vg.gen_as_strided, accepts=lambda metas: metas[0].numel > 0),
    OpDef(name="as_strided_scatter", kind=OpKind.SCATTER, arity=2, infer=_as_strided_scatter,
          apply=lambda t, p: torch.as_strided_scatter(t[0], t[1], *_strided_args(p)),
          render=lambda e, p: f"torch.as_strided_scatter({e[0]}, {e[1]}, {_strided_lit(p)})",
          doc="torch.as_strided_scatter(x, src, size, stride, offset): x contiguous from "
          "offset 0, a non-overlapping window inside x (else layout-readout)",
          gen=_gen_scatter, accepts=_scatter_ok),
]

#: schema bindings (:mod:`.schema`)
SCHEMAS = {
    "unfold": ("aten::unfold", None),
    "movedim": ("aten::movedim.intlist", None),
    "as_strided_copy": ("aten::as_strided_copy", None),
    "as_strided_scatter": ("aten::as_strided_scatter", None),
}
