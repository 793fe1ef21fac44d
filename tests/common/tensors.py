"""Exact tensor comparison for tests: layouts and bits, NaN-aware."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["assert_same", "tensor_difference"]

_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(t: torch.Tensor) -> torch.Tensor:
    flat = t.detach().reshape(-1).contiguous()
    return flat.view(_BITS[flat.element_size()])


def tensor_difference(a: Any, b: Any) -> str | None:
    """Why ``a`` and ``b`` differ, or None when they are the same.

    Tensors are the same when dtype, shape, strides, storage offset and every element's
    bits agree; a NaN matches any NaN (payloads may differ between code paths).
    Anything else compares with ``==``.
    """
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return f"tensor vs {type(b if isinstance(a, torch.Tensor) else a).__name__}"
        return None if a == b else f"{a!r} != {b!r}"
    for what in ("dtype", "shape"):
        if getattr(a, what) != getattr(b, what):
            return f"{what} {getattr(a, what)} != {getattr(b, what)}"
    if a.stride() != b.stride() or a.storage_offset() != b.storage_offset():
        return f"layout {a.stride()}+{a.storage_offset()} != {b.stride()}+{b.storage_offset()}"
    same = _bits(a) == _bits(b)
    if a.is_floating_point():
        fa, fb = a.detach().reshape(-1), b.detach().reshape(-1)
        same |= fa.isnan() & fb.isnan()
    if not bool(same.all()):
        i = int((~same).nonzero()[0])
        return f"element {i} (flat): {a.reshape(-1)[i].item()!r} != {b.reshape(-1)[i].item()!r}"
    return None


def assert_same(xs: Sequence[Any], ys: Sequence[Any], what: str = "value") -> None:
    """Assert two sequences of results are the same, element by element (see above)."""
    assert len(xs) == len(ys), f"{what}: {len(xs)} vs {len(ys)} values"
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        why = tensor_difference(x, y)
        assert why is None, f"{what} {i}: {why}"
