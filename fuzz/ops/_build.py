"""Shared builders for registry rows: literal rendering, common rule shapes, scalar params."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops.core import ValueMeta, broadcast_shapes, fresh

_FLOATS = ("float64", "float32", "bfloat16", "float16")
_INTS = ("int64", "int32", "int16", "int8", "uint8")


def lit(v: Any) -> str:
    """Render a JSON parameter as a Python literal (tuples for lists, repr for floats)."""
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list | tuple):
        inner = ", ".join(lit(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    raise InvalidArgument(f"cannot render parameter {v!r}")


def dtype_expr(name: str) -> str:
    return f"torch.{name}"


def torch_dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def category(dtype: str) -> int:
    """0 bool, 1 integer, 2 floating: PyTorch's type-promotion categories."""
    return 0 if dtype == "bool" else 1 if dtype in _INTS else 2


def promote(*dtypes: str) -> str:
    """``torch.promote_types`` over dtype names."""
    out = torch_dtype(dtypes[0])
    for d in dtypes[1:]:
        out = torch.promote_types(out, torch_dtype(d))
    return str(out).removeprefix("torch.")


def result_dtype(metas: Sequence[ValueMeta], scalar: Any = None) -> str:
    """Result dtype of an elementwise op over tensors and an optional Python scalar.

    Mirrors ``at::native::result_type``: dimensioned tensors win over 0-d tensors of the
    same category, and a Python scalar only lifts the category (int -> float uses the
    default dtype float32).
    """
    dimmed = [m.dtype for m in metas if m.ndim > 0]
    zerod = [m.dtype for m in metas if m.ndim == 0]
    out = promote(*dimmed) if dimmed else (promote(*zerod) if zerod else None)
    if zerod and out is not None and dimmed:
        z = promote(*zerod)
        if category(z) > category(out):
            out = z if category(z) == 2 and out not in _FLOATS else promote(out, z)
    if scalar is not None and not isinstance(scalar, bool):
        scat = 2 if isinstance(scalar, float) else 1
        if out is None:
            out = "float32" if scat == 2 else "int64"
        elif category(out) < scat:
            out = "float32" if scat == 2 else "int64"
    return out or "float32"


def can_cast(src: str, dst: str) -> bool:
    """``torch.can_cast`` for in-place results: no float into int, no int into bool."""
    return torch.can_cast(torch_dtype(src), torch_dtype(dst))


def elementwise_infer(metas: Sequence[ValueMeta], params: dict[str, Any], outs: Sequence[str]):
    """Fresh broadcast result of an elementwise op over its tensor arguments."""
    shape = broadcast_shapes(*(m.shape for m in metas))
    return (fresh(outs[0], shape, result_dtype(metas, params.get("other"))),)


def inplace_infer(metas: Sequence[ValueMeta], params: dict[str, Any], outs: Sequence[str]):
    """In-place elementwise rule: operands broadcast to self and the result casts to it."""
    self = metas[0]
    shape = broadcast_shapes(*(m.shape for m in metas))
    if shape != self.shape:
        raise InvalidArgument(f"in-place result shape {shape} differs from self {self.shape}")
    dt = result_dtype(metas, params.get("other"))
    if not can_cast(dt, self.dtype):
        raise InvalidArgument(f"result type {dt} can't be cast to {self.dtype}")
    return (self,)


def require_float(m: ValueMeta, what: str) -> None:
    if not m.is_float:
        raise InvalidArgument(f"{what} needs a floating tensor, got {m.dtype}")
