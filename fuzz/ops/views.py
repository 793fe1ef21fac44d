"""View ops: results alias an argument's storage with a derived offset, sizes and strides.

Each ``infer`` is the op's alias rule, mirroring ``aten/src/ATen/native/TensorShape.cpp``
(``select``, ``slice``, ``narrow``, ``as_strided``, ``diagonal``, ``expand`` via
``inferExpandGeometry``, ``view`` via ``computeStride``, ``view(dtype)``) and
``torch/csrc/autograd/python_variable_indexing.cpp`` for basic indexing;
``tests/unit/test_alias_rules.py`` checks every rule against PyTorch.

Two rows are views only sometimes, exactly as in PyTorch: ``reshape`` copies into fresh
contiguous memory when ``computeStride`` finds no view (tag ``maybe_copy``); ``infer``
says which by the result's ``storage``.
"""

from __future__ import annotations

import math

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops import _viewgen as g
from aliasfuzz.fuzz.ops._build import lit
from aliasfuzz.fuzz.ops._indexing import index_layout, py_index, render_index
from aliasfuzz.fuzz.ops._layout import compute_view_stride, infer_size
from aliasfuzz.fuzz.ops.core import NoEagerMeaning, OpDef, OpKind, ValueMeta, fresh, norm_dim

__all__ = ["BOOL_BYTES", "OPS", "index_layout", "render_index"]  # the indexing pair is re-exported

#: The one-eager-meaning rule ``view_dtype`` decides itself: bool memory seen as other bytes.
BOOL_BYTES = "bool-bytes"

def _int(v, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise InvalidArgument(f"{what} must be an integer, got {v!r}")
    return v


def _ints(v, what: str) -> tuple[int, ...]:
    if not isinstance(v, list | tuple):
        raise InvalidArgument(f"{what} must be a list of integers, got {v!r}")
    return tuple(_int(x, what) for x in v)


def _need_dims(m: ValueMeta, what: str) -> None:
    if m.ndim == 0:
        raise InvalidArgument(f"{what} on a 0-d tensor")


# -- rules ---------------------------------------------------------------------------


def _select(metas, p, outs):
    (m,) = metas
    _need_dims(m, "select")
    d = norm_dim(p["dim"], m.ndim)
    n, i = m.shape[d], _int(p["index"], "select index")
    if not -n <= i < n:
        raise InvalidArgument(f"select index {i} out of range for size {n}")
    shape, stride = m.shape[:d] + m.shape[d + 1 :], m.stride[:d] + m.stride[d + 1 :]
    return (m.view(shape, stride, m.offset + (i % n) * m.stride[d]),)


def _narrow(metas, p, outs):
    (m,) = metas
    _need_dims(m, "narrow")
    d = norm_dim(p["dim"], m.ndim)
    n = m.shape[d]
    start, length = _int(p["start"], "narrow start"), _int(p["length"], "narrow length")
    if not -n <= start <= n:
        raise InvalidArgument(f"narrow start {start} out of range for size {n}")
    start = start + n if start < 0 else start
    if length < 0 or start + length > n:
        raise InvalidArgument(f"narrow: start ({start}) + length ({length}) exceeds size {n}")
    shape = list(m.shape)
    shape[d] = length
    return (m.view(shape, m.stride, m.offset + start * m.stride[d]),)


def _permuted(m: ValueMeta, dims) -> ValueMeta:
    return m.view([m.shape[d] for d in dims], [m.stride[d] for d in dims], m.offset)


def _transpose(metas, p, outs):
    (m,) = metas
    d0, d1 = norm_dim(p["dim0"], m.ndim), norm_dim(p["dim1"], m.ndim)
    dims = list(range(m.ndim))
    if m.ndim:
        dims[d0], dims[d1] = d1, d0
    return (_permuted(m, dims),)


def _permute(metas, p, outs):
    (m,) = metas
    dims = [norm_dim(d, m.ndim) for d in _ints(p["dims"], "permute dims")]
    if len(dims) != m.ndim or sorted(dims) != list(range(m.ndim)):
        raise InvalidArgument(f"permute dims {list(p['dims'])} are not a permutation of {m.ndim} dims")
    return (_permuted(m, dims),)


def _t(metas, p, outs):
    (m,) = metas
    if m.ndim > 2:
        raise InvalidArgument(f"t() expects a tensor with <= 2 dimensions, got {m.ndim}")
    return (_permuted(m, list(range(m.ndim))[::-1]),)


def _unsqueeze(metas, p, outs):
    (m,) = metas
    d = norm_dim(p["dim"], m.ndim + 1)
    st = m.shape[d] * m.stride[d] if d < m.ndim else 1
    return (m.view(m.shape[:d] + (1,) + m.shape[d:], m.stride[:d] + (st,) + m.stride[d:], m.offset),)


def _squeeze(metas, p, outs):
    (m,) = metas
    dim = p.get("dim")
    if dim is None:
        keep = [i for i in range(m.ndim) if m.shape[i] != 1]
    else:
        d = norm_dim(dim, m.ndim)
        keep = [i for i in range(m.ndim) if i != d or m.shape[i] != 1]
    return (m.view([m.shape[i] for i in keep], [m.stride[i] for i in keep], m.offset),)


def _expand(metas, p, outs):
    # at::inferExpandGeometry (ExpandUtils.cpp).
    (m,) = metas
    sizes = _ints(p["size"], "expand size")
    if len(sizes) < m.ndim:
        raise InvalidArgument(f"expand: {len(sizes)} sizes for a {m.ndim}-d tensor")
    nd = len(sizes)
    shape, stride = [0] * nd, [0] * nd
    for i in range(nd - 1, -1, -1):
        dim = m.ndim - (nd - i)
        size = m.shape[dim] if dim >= 0 else 1
        st = m.stride[dim] if dim >= 0 else (shape[i + 1] * stride[i + 1] if i + 1 < nd else 0)
        target = sizes[i]
        if target == -1:
            if dim < 0:
                raise InvalidArgument(f"expand: -1 is not allowed in a new leading dim {i}")
            target = size
        if target < 0:
            raise InvalidArgument(f"expand: invalid size {target}")
        if size != target:
            if size != 1:
                raise InvalidArgument(
                    f"expand: size {target} must match the existing size {size} at dim {i}"
                )
            size, st = target, 0
        shape[i], stride[i] = size, st
    return (m.view(shape, stride, m.offset),)


def _as_strided(metas, p, outs):
    (m,) = metas
    size, stride = _ints(p["size"], "as_strided size"), _ints(p["stride"], "as_strided stride")
    off = _int(p.get("offset", m.offset), "as_strided offset")
    if len(size) != len(stride):
        raise InvalidArgument("as_strided: size and stride differ in length")
    if any(n < 0 for n in size) or any(s < 0 for s in stride) or off < 0:
        raise InvalidArgument("as_strided: negative size, stride or offset")
    if math.prod(size):
        need = (off + sum((n - 1) * s for n, s in zip(size, stride, strict=False)) + 1) * m.itemsize
        if need > m.storage_nbytes:
            raise InvalidArgument(
                f"as_strided: needs {need} bytes but the storage has {m.storage_nbytes}"
            )
    return (m.view(size, stride, off),)


def as_strided_render(method: str):
    """The rendering of ``x.<method>(size, stride[, offset])`` (``as_strided`` and its
    in-place form ``as_strided_``, :mod:`.metadata`)."""
    def render(e, p) -> str:
        off = "" if p.get("offset") is None else f", {p['offset']}"
        return f"{e[0]}.{method}({g.shape_lit(p['size'])}, {g.shape_lit(p['stride'])}{off})"
    return render


def _diagonal(metas, p, outs):
    (m,) = metas
    if m.ndim < 2:
        raise InvalidArgument("diagonal needs a tensor with at least 2 dims")
    k = _int(p.get("offset", 0), "diagonal offset")
    d1, d2 = norm_dim(p.get("dim1", 0), m.ndim), norm_dim(p.get("dim2", 1), m.ndim)
    if d1 == d2:
        raise InvalidArgument(f"diagonal dimensions cannot be identical {d1}, {d2}")
    n1, n2 = m.shape[d1], m.shape[d2]
    size = max(min(n1, n2 - k) if k >= 0 else min(n1 + k, n2), 0)
    off = m.offset
    if size:
        off += k * m.stride[d2] if k >= 0 else -k * m.stride[d1]
    keep = [i for i in range(m.ndim) if i not in (d1, d2)]
    shape = [m.shape[i] for i in keep] + [size]
    stride = [m.stride[i] for i in keep] + [m.stride[d1] + m.stride[d2]]
    return (m.view(shape, stride, off),)


def _view_dtype(metas, p, outs):
    # at::native::view_dtype (TensorConversions.cpp); units change with the itemsize.
    from aliasfuzz.fuzz.ir import DTYPES

    (m,) = metas
    dt = p["dtype"]
    if dt not in DTYPES:
        raise InvalidArgument(f"unknown dtype {dt!r}")
    if (m.dtype == "bool") != (dt == "bool"):
        # a bool holds the byte 0 or 1; any other byte (written through a uint8 view of
        # bool memory, or read from other bytes as bool) is undefined behaviour in ATen's
        # kernels, and eager's own copies normalise it (x.clone() turns 2 into 1): the
        # ninth campaign's c4ca8b0e6d, x.view(torch.uint8).add_(1) on a bool tensor
        raise NoEagerMeaning(BOOL_BYTES, "bool memory reinterpreted as another dtype",
                             f"view({dt}) of a {m.dtype} tensor")
    old, new = m.itemsize, DTYPES[dt]
    if old == new:
        return (ValueMeta(m.shape, m.stride, m.offset, dt, m.storage, m.storage_nbytes),)
    what = f"to view {m.dtype} as {dt} (different element sizes)"
    if m.ndim == 0:
        raise InvalidArgument(f"self.dim() cannot be 0 {what}")
    if m.stride[-1] != 1:
        raise InvalidArgument(f"self.stride(-1) must be 1 {what}")
    shape, stride = list(m.shape), list(m.stride)
    if old > new:
        r = old // new
        stride = [s * r for s in stride]
        stride[-1] = 1
        shape[-1] *= r
        off = m.offset * r
    else:
        r = new // old
        if shape[-1] % r:
            raise InvalidArgument(f"self.size(-1) must be divisible by {r} {what}")
        if m.offset % r:
            raise InvalidArgument(f"self.storage_offset() must be divisible by {r} {what}")
        if any(s % r for s in stride[:-1]):
            raise InvalidArgument(f"self.stride(i) must be divisible by {r} for i < ndim-1 {what}")
        stride = [s // r for s in stride[:-1]] + [1]
        shape[-1] //= r
        off = m.offset // r
    return (ValueMeta(tuple(shape), tuple(stride), off, dt, m.storage, m.storage_nbytes),)


def _view(metas, p, outs):
    (m,) = metas
    shape = infer_size(_ints(p["shape"], "view shape"), m.numel)
    stride = compute_view_stride(m.shape, m.stride, shape)
    if stride is None:
        raise InvalidArgument(
            f"view size {list(shape)} is not compatible with input size {list(m.shape)} and "
            f"stride {list(m.stride)}; use reshape"
        )
    return (m.view(shape, stride, m.offset),)


def _reshape(metas, p, outs):
    # at::native::reshape: a view when computeStride succeeds, else clone(contiguous).view.
    (m,) = metas
    shape = infer_size(_ints(p["shape"], "reshape shape"), m.numel)
    stride = compute_view_stride(m.shape, m.stride, shape)
    if stride is None:
        return (fresh(outs[0], shape, m.dtype),)
    return (m.view(shape, stride, m.offset),)


def _index(metas, p, outs):
    return (index_layout(metas[0], p["idx"]),)


def _split_sizes(m: ValueMeta, p) -> tuple[int, list[int]]:
    d = norm_dim(p.get("dim", 0), m.ndim)
    _need_dims(m, "split")
    n = m.shape[d]
    k = _int(p["split_size"], "split_size")
    if k < 0 or (k == 0 and n != 0):
        raise InvalidArgument(f"split_size must be positive for a dim of size {n}, got {k}")
    count = max((n + k - 1) // k, 1) if k else 1
    return d, [min(k, n - i * k) for i in range(count)]


def _chunk_sizes(m: ValueMeta, p) -> tuple[int, list[int]]:
    _need_dims(m, "chunk")
    d = norm_dim(p.get("dim", 0), m.ndim)
    c = _int(p["chunks"], "chunks")
    if c <= 0:
        raise InvalidArgument(f"chunk expects `chunks` to be greater than 0, got: {c}")
    n = m.shape[d]
    k = (n + c - 1) // c
    if k == 0 and n == 0:
        return d, [0] * c
    return _split_sizes(m, {"dim": d, "split_size": k})


def _pieces(m: ValueMeta, d: int, sizes: list[int]) -> tuple[ValueMeta, ...]:
    out, start = [], 0
    for n in sizes:
        shape = list(m.shape)
        shape[d] = n
        out.append(m.view(shape, m.stride, m.offset + start * m.stride[d]))
        start += n
    return tuple(out)


def _unbind_parts(m: ValueMeta, p) -> tuple[ValueMeta, ...]:
    _need_dims(m, "unbind")
    d = norm_dim(p.get("dim", 0), m.ndim)
    return tuple(_select((m,), {"dim": d, "index": i}, ())[0] for i in range(m.shape[d]))


def _split(metas, p, outs):
    return _pieces(metas[0], *_split_sizes(metas[0], p))


def _chunk(metas, p, outs):
    return _pieces(metas[0], *_chunk_sizes(metas[0], p))


def _dropout(metas, p, outs):
    prob = p.get("p", 0.5)
    if not isinstance(prob, int | float) or isinstance(prob, bool) or not 0 <= prob <= 1:
        raise InvalidArgument(f"dropout probability has to be between 0 and 1, but got {prob!r}")
    if not metas[0].is_float:
        raise InvalidArgument(f"dropout needs a floating tensor, got {metas[0].dtype}")
    return (metas[0],)


def _row(name, infer, apply, render, doc, gen=None, accepts=None, **kw) -> OpDef:
    return OpDef(
        name=name, kind=OpKind.VIEW, arity=1, infer=infer, apply=apply, render=render,
        doc=doc, gen=gen, accepts=accepts, **kw,
    )


def _count(parts):
    return lambda metas, p: len(parts(metas, p, ()))


OPS = [
    _row("view", _view, lambda t, p: t[0].view(list(p["shape"])),
         lambda e, p: f"{e[0]}.view({g.shape_lit(p['shape'])})",
         "x.view(shape): computeStride's layout, or an error when not viewable",
         gen=g.gen_view, accepts=g.has_view_candidates),
    _row("reshape", _reshape, lambda t, p: t[0].reshape(list(p["shape"])),
         lambda e, p: f"{e[0]}.reshape({g.shape_lit(p['shape'])})",
         "x.reshape(shape): a view when computeStride allows, else a fresh contiguous copy",
         gen=g.gen_reshape, tags=frozenset({"maybe_copy"})),
    _row("index", _index, lambda t, p: t[0][py_index(p["idx"])],
         lambda e, p: f"{e[0]}[{render_index(p['idx'])}]",
         "x[items]: basic indexing with ints, slices with steps, None and '...'",
         gen=g.gen_index),
    _row("select", _select, lambda t, p: t[0].select(p["dim"], p["index"]),
         lambda e, p: f"{e[0]}.select({p['dim']}, {p['index']})",
         "x.select(dim, index)", gen=g.gen_select, accepts=g.has_nonempty_dim),
    _row("narrow", _narrow, lambda t, p: t[0].narrow(p["dim"], p["start"], p["length"]),
         lambda e, p: f"{e[0]}.narrow({p['dim']}, {p['start']}, {p['length']})",
         "x.narrow(dim, start, length)", gen=g.gen_narrow, accepts=g.has_nonempty_dim),
    _row("transpose", _transpose, lambda t, p: t[0].transpose(p["dim0"], p["dim1"]),
         lambda e, p: f"{e[0]}.transpose({p['dim0']}, {p['dim1']})",
         "x.transpose(dim0, dim1)", gen=g.gen_transpose),
    _row("permute", _permute, lambda t, p: t[0].permute(list(p["dims"])),
         lambda e, p: f"{e[0]}.permute({g.shape_lit(p['dims'])})",
         "x.permute(dims)", gen=g.gen_permute),
    _row("t", _t, lambda t, p: t[0].t(), lambda e, p: f"{e[0]}.t()", "x.t() (ndim <= 2)",
         gen=lambda draw, metas: {}, accepts=lambda metas: metas[0].ndim <= 2),
    _row("unsqueeze", _unsqueeze, lambda t, p: t[0].unsqueeze(p["dim"]),
         lambda e, p: f"{e[0]}.unsqueeze({p['dim']})", "x.unsqueeze(dim)",
         gen=g.gen_unsqueeze),
    _row("squeeze", _squeeze,
         lambda t, p: t[0].squeeze() if p.get("dim") is None else t[0].squeeze(p["dim"]),
         lambda e, p: f"{e[0]}.squeeze({'' if p.get('dim') is None else p['dim']})",
         "x.squeeze() or x.squeeze(dim)", gen=g.gen_squeeze),
    _row("expand", _expand, lambda t, p: t[0].expand(list(p["size"])),
         lambda e, p: f"{e[0]}.expand({g.shape_lit(p['size'])})",
         "x.expand(sizes): broadcast dims get stride 0", gen=g.gen_expand),
    _row("as_strided", _as_strided,
         lambda t, p: t[0].as_strided(list(p["size"]), list(p["stride"]), p.get("offset")),
         as_strided_render("as_strided"),
         "x.as_strided(size, stride, offset) within the storage", gen=g.gen_as_strided),
    _row("diagonal", _diagonal,
         lambda t, p: t[0].diagonal(p.get("offset", 0), p.get("dim1", 0), p.get("dim2", 1)),
         lambda e, p: f"{e[0]}.diagonal({p.get('offset', 0)}, {p.get('dim1', 0)}, {p.get('dim2', 1)})",
         "x.diagonal(offset, dim1, dim2)", gen=g.gen_diagonal,
         accepts=lambda metas: metas[0].ndim >= 2),
    _row("view_dtype", _view_dtype, lambda t, p: t[0].view(g.torch_dtype(p["dtype"])),
         lambda e, p: f"{e[0]}.view(torch.{p['dtype']})",
         "x.view(dtype): reinterpret the bytes; sizes/strides scale with the itemsize",
         gen=g.gen_view_dtype, scriptable=False),
    _row("split", _split, lambda t, p: t[0].split(p["split_size"], p.get("dim", 0)),
         lambda e, p: f"{e[0]}.split({p['split_size']}, {p.get('dim', 0)})",
         "x.split(split_size, dim): one result per piece", n_out=None,
         count_out=_count(_split), gen=g.gen_split, accepts=g.has_nonempty_dim),
    _row("chunk", _chunk, lambda t, p: t[0].chunk(p["chunks"], p.get("dim", 0)),
         lambda e, p: f"{e[0]}.chunk({p['chunks']}, {p.get('dim', 0)})",
         "x.chunk(chunks, dim): may return fewer than `chunks` pieces", n_out=None,
         count_out=_count(_chunk), gen=g.gen_chunk, accepts=g.has_nonempty_dim),
    _row("unbind", lambda m, p, o: _unbind_parts(m[0], p), lambda t, p: t[0].unbind(p.get("dim", 0)),
         lambda e, p: f"{e[0]}.unbind({p.get('dim', 0)})",
         "x.unbind(dim): one result per index", n_out=None,
         count_out=lambda metas, p: len(_unbind_parts(metas[0], p)), gen=g.gen_unbind,
         accepts=g.has_nonempty_dim),
    _row("dropout_eval", _dropout,
         lambda t, p: torch.nn.functional.dropout(t[0], p.get("p", 0.5), False),
         lambda e, p: f"torch.nn.functional.dropout({e[0]}, p={lit(float(p.get('p', 0.5)))}, training=False)",
         "F.dropout(x, p, training=False): returns x itself (shared/cases/b07)",
         gen=lambda draw, metas: {"p": draw.choice([0.5, 0.0, 1.0])},
         accepts=lambda metas: metas[0].is_float, tags=frozenset({"alias_beyond_schema"})),
]

