"""Basic indexing (``x[1:3:2, 0, None, ...]``): its JSON form, layout rule and rendering.

The JSON form of an index is a non-empty list of items: an int selects, ``[start, stop,
step]`` (entries may be None) slices, ``None`` inserts a size-1 dim and ``"..."`` skips the
remaining dims. Mirrors ``applySlicing`` (ATen/TensorIndexing.h) and ``at::native::slice``.
"""

from __future__ import annotations

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops.core import ValueMeta

__all__ = ["index_layout", "py_index", "render_index"]

_INT64_MAX = (1 << 63) - 1


def _slice(shape, stride, off, dim, start, stop, step):
    # at::native::slice: wrap negatives once, clamp into [0, n], empty when stop < start.
    n = shape[dim]
    start = 0 if start is None else start
    stop = _INT64_MAX if stop is None else stop
    if step <= 0:
        raise InvalidArgument("slice step must be greater than zero")
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    start = min(max(start, 0), n)
    stop = min(max(stop, start), n)
    off += start * stride[dim]
    shape[dim] = (stop - start + step - 1) // step
    stride[dim] *= step
    return off


def _check_items(items) -> tuple:
    if not isinstance(items, list | tuple) or not items:
        raise InvalidArgument(f"index items must be a non-empty list, got {items!r}")
    for it in items:
        ok = it is None or it == "..." or (isinstance(it, int) and not isinstance(it, bool))
        if isinstance(it, list | tuple):
            ok = len(it) == 3 and all(
                x is None or (isinstance(x, int) and not isinstance(x, bool)) for x in it
            )
        if not ok:
            raise InvalidArgument(
                f"index item {it!r}: expected an int, None, '...' or [start, stop, step]"
            )
    if sum(1 for it in items if it == "...") > 1:
        raise InvalidArgument("an index can only have a single ellipsis ('...')")
    return tuple(items)


def index_layout(m: ValueMeta, items) -> ValueMeta:
    """The view ``x[items]`` of basic indexing (ints, slices, None, one Ellipsis).

    ``items`` is the JSON form: an int selects, ``[start, stop, step]`` (entries may be
    None) slices, ``None`` inserts a size-1 dim, ``"..."`` skips the remaining dims.
    Mirrors ``applySlicing`` (ATen/TensorIndexing.h); raises InvalidArgument for what it
    rejects (too many indices, out-of-range ints, non-positive steps).
    """
    items = _check_items(items)
    specified = sum(1 for it in items if it is not None and it != "...")
    if specified > m.ndim:
        raise InvalidArgument(f"too many indices for tensor of dimension {m.ndim}")
    shape, stride, off = list(m.shape), list(m.stride), m.offset
    dim = 0
    for it in items:
        if it == "...":
            dim += m.ndim - specified
        elif it is None:
            st = shape[dim] * stride[dim] if dim < len(shape) else 1
            shape.insert(dim, 1)
            stride.insert(dim, st)
            dim += 1
        elif isinstance(it, int):
            n = shape[dim]
            if not -n <= it < n:
                raise InvalidArgument(f"index {it} is out of bounds for dimension {dim} with size {n}")
            off += (it % n) * stride[dim]
            del shape[dim], stride[dim]
        else:
            off = _slice(shape, stride, off, dim, it[0], it[1], 1 if it[2] is None else it[2])
            dim += 1
    return m.view(shape, stride, off)


def render_index(items) -> str:
    """The subscript source of ``items`` (``1:3:2, 0, None, ...``); ``()`` never occurs."""
    parts = []
    for it in _check_items(items):
        if it is None or it == "...":
            parts.append("None" if it is None else "...")
        elif isinstance(it, int):
            parts.append(str(it))
        else:
            a, b, c = ("" if x is None else str(x) for x in it)
            parts.append(f"{a}:{b}" + (f":{c}" if c not in ("", "1") else ""))
    return ", ".join(parts)




def py_index(items) -> tuple:
    """The JSON index items as a Python subscript tuple (ints, None, Ellipsis, slices)."""
    out = []
    for it in _check_items(items):
        if it == "...":
            out.append(Ellipsis)
        elif it is None or isinstance(it, int):
            out.append(it)
        else:
            out.append(slice(*it))
    return tuple(out)
