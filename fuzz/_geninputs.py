"""Drawing a program's inputs: storages and strided, possibly aliased views into them.

Part of the generator core of :mod:`aliasfuzz.fuzz.strategies` (see there for the draw
order and the shrinking design). Layout kinds, in shrink order: fresh contiguous,
transposed, sliced from a larger contiguous base (steps, storage offset), explicit
size/stride/offset inside a buffer (may self-overlap). Further inputs may share an
existing storage, overlapping it or placed after everything on it; sometimes a bool mask
or an int64 (0/1) input shaped like an earlier input follows.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from aliasfuzz.fuzz.ir import StorageSpec, TensorSpec, contiguous_strides

if TYPE_CHECKING:
    from aliasfuzz.fuzz.strategies import DrawBase, GenConfig

__all__ = ["draw_inputs"]

_FLOATS = ("float32", "float64", "float16", "bfloat16")


def _draw_shape(draw: DrawBase, cfg: GenConfig) -> tuple[int, ...]:
    ndim = 0 if draw.boolean(0.05) else draw.integer(1, max(cfg.max_ndim, 1))
    ndim = min(ndim, cfg.max_ndim)
    # Empty dimensions are rare: most ops are uninteresting (or invalid) on them.
    return tuple(0 if draw.boolean(0.01) else draw.integer(1, cfg.max_size) for _ in range(ndim))


def _draw_layout(draw: DrawBase, cfg: GenConfig) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Shape, strides and storage offset of one input view (elements)."""
    shape = _draw_shape(draw, cfg)
    nd = len(shape)
    kind = draw.choice(("contiguous", "transposed", "sliced", "strided"))
    if kind == "transposed" and nd >= 2:
        d0 = draw.integer(0, nd - 2)
        d1 = draw.integer(d0 + 1, nd - 1)
        base = list(shape)
        base[d0], base[d1] = base[d1], base[d0]
        stride = list(contiguous_strides(tuple(base)))
        stride[d0], stride[d1] = stride[d1], stride[d0]
        return shape, tuple(stride), 0
    if kind == "sliced":
        # x = base[start::step, ...] of a contiguous base a little larger than the view.
        steps = [2 if draw.boolean(0.3) else 1 for _ in shape]
        starts = [draw.integer(0, 2) for _ in shape]
        base = tuple(
            s + max(n - 1, 0) * k + 1 + draw.integer(0, 1)
            for n, k, s in zip(shape, steps, starts, strict=True)
        )
        bstride = contiguous_strides(base)
        offset = sum(s * b for s, b in zip(starts, bstride, strict=True)) + (
            draw.integer(1, 3) if nd == 0 else 0
        )
        return shape, tuple(b * k for b, k in zip(bstride, steps, strict=True)), offset
    if kind == "strided":
        # An explicit layout inside a larger buffer; may self-overlap (stride 0 or small
        # strides): reads of it are valid, writes are rejected by the registry rules.
        stride = tuple(0 if draw.boolean(0.1) else draw.integer(1, 6) for _ in shape)
        return shape, stride, draw.integer(0, 4)
    return shape, contiguous_strides(shape), 0


def _span(shape, stride, offset) -> int:
    if any(n == 0 for n in shape):
        return offset
    return offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) + 1


def draw_inputs(
    draw: DrawBase, cfg: GenConfig
) -> tuple[tuple[StorageSpec, ...], tuple[TensorSpec, ...]]:
    """Storages and input views of one program (names ``s<i>`` and ``x<i>``)."""
    storages: list[dict[str, Any]] = []
    inputs: list[TensorSpec] = []
    n = draw.integer(1, cfg.max_inputs)
    for i in range(n):
        name = f"x{i}"
        if storages and cfg.aliased_inputs and draw.boolean(0.3):
            # Another view of an existing storage: overlapping, or placed after all others.
            st_ = draw.choice(storages)
            shape, stride, offset = _draw_layout(draw, cfg)
            if draw.boolean():
                offset += st_["numel"]
        else:
            st_ = {"name": f"s{len(storages)}", "numel": 0, "dtype": draw.choice(cfg.dtypes)}
            storages.append(st_)
            shape, stride, offset = _draw_layout(draw, cfg)
        st_["numel"] = max(st_["numel"], _span(shape, stride, offset) + draw.integer(0, 1))
        inputs.append(TensorSpec(name, st_["name"], shape, stride, offset))
    if cfg.index_inputs and draw.boolean(0.25):
        # A mask (bool) or index (int64, values 0/1) shaped like an earlier input.
        dtype = draw.choice(("bool", "int64"))
        like = draw.choice(inputs)
        st_ = {"name": f"s{len(storages)}", "numel": math.prod(like.shape), "dtype": dtype}
        st_["init"] = ("randint", {"seed": draw.integer(0, 255), "low": 0, "high": 2})
        storages.append(st_)
        shape = like.shape
        inputs.append(TensorSpec(f"x{n}", st_["name"], shape, contiguous_strides(shape), 0))
    specs = tuple(_storage_spec(draw, s) for s in storages)
    return specs, tuple(inputs)


def _storage_spec(draw: DrawBase, s: dict[str, Any]) -> StorageSpec:
    if "init" in s:
        init, args = s["init"]
    elif s["dtype"] in _FLOATS and draw.boolean(0.2):
        init, args = "randn", {"seed": draw.integer(0, 255)}
    else:
        # arange: every element distinct, so a wrong element shows in the values.
        init, args = "arange", {}
    return StorageSpec(s["name"], s["numel"], s["dtype"], init, args)
