"""Factory ops: fresh storage out, no tensor read (``torch.zeros``, ``torch.full``, ``empty_like``).

Shapes are static parameters (lists of ints). ``float32`` is torch's default dtype and is
left out of the rendering, so ``zeros([1])`` renders as the cases write it; TorchScript
turns such constant factories into constants, which case b23 depends on. ``zeros`` and
``full`` take an optional tensor argument whose device they use (``device=x.device``, no
read): programs run on ``cuda`` need it, so generated statements always have one.
``empty_like`` leaves its values uninitialized: it has no ``gen`` (a program reading them
would have no single eager meaning); hand-written programs overwrite it fully.
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ir import DTYPES
from aliasfuzz.fuzz.ops._build import lit, torch_dtype
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, fresh

__all__ = ["OPS"]


def _shape(params) -> tuple[int, ...]:
    shape = params["shape"]
    if not isinstance(shape, list | tuple) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise InvalidArgument(f"shape must be a list of sizes >= 0, got {shape!r}")
    return tuple(shape)


def _dtype(params) -> str:
    dt = params.get("dtype", "float32")
    if dt not in DTYPES:
        raise InvalidArgument(f"unknown dtype {dt!r}")
    return dt


def _zeros_infer(metas, params, outs):
    return (fresh(outs[0], _shape(params), _dtype(params)),)


def _full_infer(metas, params, outs):
    dt = _dtype(params)
    value = params["value"]
    if isinstance(value, float) and dt not in ("float32", "float64", "float16", "bfloat16"):
        raise InvalidArgument(f"full: float value {value!r} for dtype {dt}")
    if not isinstance(value, int | float | bool):
        raise InvalidArgument(f"full: value {value!r} is not a number")
    return (fresh(outs[0], _shape(params), dt),)


def _empty_like_infer(metas, params, outs):
    (m,) = metas
    # empty_like preserves a dense input's strides; generated programs only write it
    # whole, so the contiguous layout is the one that matters for footprints
    return (fresh(outs[0], m.shape, m.dtype),)


def _dtype_kw(params, e=()) -> str:
    dt = params.get("dtype", "float32")
    kw = "" if dt == "float32" else f", dtype=torch.{dt}"
    return kw + (f", device={e[0]}.device" if e else "")


def _apply(fn):
    def apply(t, p):
        dev = {"device": t[0].device} if t else {}
        return fn(p, dtype=torch_dtype(p.get("dtype", "float32")), **dev)

    return apply


def _shape_list(params) -> str:
    return "[" + ", ".join(str(n) for n in params["shape"]) + "]"


def _gen_shape(draw, metas):
    if not metas:
        # without a device argument the result would stay on the CPU in a cuda run
        raise GenerationFailure("generated factories take a device argument")
    ndim = draw.integer(1, 3)
    shape = [draw.integer(1, 4) for _ in range(ndim)]
    dtype = "float32" if not draw.boolean(0.2) else draw.choice(["int64", "float64"])
    return {"shape": shape, "dtype": dtype}


def _gen_full(draw, metas):
    p = _gen_shape(draw, metas)
    p["value"] = draw.scalar(p["dtype"])
    return p


OPS = [
    OpDef(
        name="zeros",
        kind=OpKind.FACTORY,
        arity=(0, 1),
        infer=_zeros_infer,
        apply=_apply(lambda p, **kw: torch.zeros(p["shape"], **kw)),
        render=lambda e, p: f"torch.zeros({_shape_list(p)}{_dtype_kw(p, e)})",
        reads=(),
        mutates=(),
        doc="torch.zeros(shape, dtype=dtype[, device=x.device])",
        gen=_gen_shape,
    ),
    OpDef(
        name="full",
        kind=OpKind.FACTORY,
        arity=(0, 1),
        infer=_full_infer,
        apply=_apply(lambda p, **kw: torch.full(p["shape"], p["value"], **kw)),
        render=lambda e, p: f"torch.full({_shape_list(p)}, {lit(p['value'])}{_dtype_kw(p, e)})",
        reads=(),
        mutates=(),
        doc="torch.full(shape, value, dtype=dtype[, device=x.device])",
        gen=_gen_full,
    ),
    OpDef(
        name="empty_like",
        kind=OpKind.FACTORY,
        arity=1,
        infer=_empty_like_infer,
        apply=lambda t, p: torch.empty_like(t[0]),
        render=lambda e, p: f"torch.empty_like({e[0]})",
        reads=(),
        doc="torch.empty_like(x): x's shape, dtype and device, uninitialized values",
    ),
]
