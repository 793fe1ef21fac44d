"""Shared builders for registry rows: literal rendering, common rule shapes, scalar params."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import DTYPES
from aliasfuzz.fuzz.ops._layout import empty_like_strides, tensor_iterator_strides
from aliasfuzz.fuzz.ops.core import ValueMeta, broadcast_shapes

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
    """Fresh broadcast result of an elementwise op over its tensor arguments (and ``other``).

    The result's strides are those TensorIterator allocates (a Python scalar ``other`` is a
    0-d operand); see :func:`~aliasfuzz.fuzz.ops._layout.tensor_iterator_strides`.
    """
    shape = broadcast_shapes(*(m.shape for m in metas))
    dt = result_dtype(metas, params.get("other"))
    operands = [iterator_operand(m, dt) for m in metas]
    if "other" in params:
        operands.append(((), ()))
    return (fresh_strided(outs[0], shape, tensor_iterator_strides(shape, operands), dt),)


def iterator_operand(m: ValueMeta, common: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The layout TensorIterator sees for input ``m`` when computing in dtype ``common``.

    On CPU, ``compute_types`` replaces an input of another dtype by ``input.to(common)``
    (``promote_inputs_to_common_dtype``), whose layout is ``empty_like``'s (preserve).
    """
    if m.dtype == common:
        return m.shape, m.stride
    return m.shape, empty_like_strides(m.shape, m.stride)


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


def fresh_strided(name: str, shape, stride, dtype: str) -> ValueMeta:
    """A fresh tensor bound to ``name`` with explicit strides (``at::empty_strided``).

    The storage size is ``computeStorageNbytes``: one past the farthest element, in bytes.
    """
    shape, stride = tuple(shape), tuple(stride)
    span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=False))
    return ValueMeta(shape, stride, 0, dtype, name, span * DTYPES[dtype])


def no_bool(m: ValueMeta, what: str) -> None:
    """Raise InvalidArgument when ``m`` is a bool tensor (ops PyTorch refuses on bool)."""
    if m.dtype == "bool":
        raise InvalidArgument(f"{what} is not supported on bool tensors")


def fits(value: Any, dtype: str) -> bool:
    """Whether Python scalar ``value`` converts to ``dtype`` without overflow.

    Mirrors ``c10::checked_convert``: integer targets take ints and floats in their range;
    float16/bfloat16 take finite floats up to their max.
    """
    if isinstance(value, bool) or dtype == "bool":
        return True
    if dtype in _INTS:
        info = torch.iinfo(torch_dtype(dtype))
        if dtype == "uint8" and isinstance(value, int):
            return -info.max <= value <= info.max  # negative ints wrap (two's complement)
        return info.min <= value <= info.max
    if dtype in ("float16", "bfloat16"):
        return abs(value) <= torch.finfo(torch_dtype(dtype)).max
    return True


def scalar_param(p: dict[str, Any], key: str) -> int | float | bool:
    """Parameter ``key`` as a Python number; InvalidArgument when missing or not a number."""
    v = p[key]
    if not isinstance(v, int | float | bool):
        raise InvalidArgument(f"{key} must be a number, got {v!r}")
    return v


def int_list_lit(v: Any) -> str:
    """A (nested) list of ints as a list literal (``torch.tensor`` input; TorchScript-safe)."""
    if isinstance(v, list | tuple):
        return "[" + ", ".join(int_list_lit(x) for x in v) + "]"
    return str(int(v))
