"""View ops: results alias an argument's storage with a derived offset, sizes and strides.

Each ``infer`` is the op's alias rule, mirroring ``aten/src/ATen/native/TensorShape.cpp``;
``tests/unit/test_alias_rules.py`` checks it against PyTorch op by op.
"""

from __future__ import annotations

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops._build import lit
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, norm_dim


def _select_infer(metas, params, outs):
    (m,) = metas
    if m.ndim == 0:
        raise InvalidArgument("select on a 0-d tensor")
    d = norm_dim(params["dim"], m.ndim)
    n = m.shape[d]
    i = params["index"]
    if not isinstance(i, int) or not -n <= i < n:
        raise InvalidArgument(f"select index {i!r} out of range for size {n}")
    i %= n
    shape = m.shape[:d] + m.shape[d + 1 :]
    stride = m.stride[:d] + m.stride[d + 1 :]
    return (m.view(shape, stride, m.offset + i * m.stride[d]),)


def _transpose_infer(metas, params, outs):
    (m,) = metas
    d0 = norm_dim(params["dim0"], m.ndim)
    d1 = norm_dim(params["dim1"], m.ndim)
    shape, stride = list(m.shape), list(m.stride)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    stride[d0], stride[d1] = stride[d1], stride[d0]
    return (m.view(shape, stride, m.offset),)


def _narrow_infer(metas, params, outs):
    (m,) = metas
    if m.ndim == 0:
        raise InvalidArgument("narrow on a 0-d tensor")
    d = norm_dim(params["dim"], m.ndim)
    start, length = params["start"], params["length"]
    n = m.shape[d]
    if not isinstance(start, int) or not -n <= start <= n:
        raise InvalidArgument(f"narrow start {start!r} out of range for size {n}")
    start %= max(n, 1) if start < 0 else n + 1
    if not isinstance(length, int) or length < 0 or start + length > n:
        raise InvalidArgument(f"narrow length {length!r} out of range")
    shape = list(m.shape)
    shape[d] = length
    return (m.view(shape, m.stride, m.offset + start * m.stride[d]),)


OPS = [
    OpDef(
        name="select",
        kind=OpKind.VIEW,
        arity=1,
        infer=_select_infer,
        apply=lambda t, p: t[0].select(p["dim"], p["index"]),
        render=lambda e, p: f"{e[0]}.select({p['dim']}, {p['index']})",
        doc="x.select(dim, index)",
    ),
    OpDef(
        name="transpose",
        kind=OpKind.VIEW,
        arity=1,
        infer=_transpose_infer,
        apply=lambda t, p: t[0].transpose(p["dim0"], p["dim1"]),
        render=lambda e, p: f"{e[0]}.transpose({p['dim0']}, {p['dim1']})",
        doc="x.transpose(dim0, dim1)",
    ),
    OpDef(
        name="narrow",
        kind=OpKind.VIEW,
        arity=1,
        infer=_narrow_infer,
        apply=lambda t, p: t[0].narrow(p["dim"], p["start"], p["length"]),
        render=lambda e, p: f"{e[0]}.narrow({p['dim']}, {lit(p['start'])}, {p['length']})",
        doc="x.narrow(dim, start, length)",
    ),
]
