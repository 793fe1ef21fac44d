"""Layout rules that PyTorch applies to strides, written as pure functions over tuples.

Units: sizes in elements, strides and offsets in elements of the tensor's dtype. Each
function names the ATen source it mirrors; ``tests/unit/test_alias_rules.py`` and
``tests/unit/test_registry.py`` check them against torch on real tensors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import contiguous_strides

__all__ = [
    "compute_view_stride",
    "empty_like_strides",
    "infer_dense_strides",
    "infer_size",
    "is_contiguous",
    "is_non_overlapping_and_dense",
    "memory_format_strides",
    "tensor_iterator_strides",
]

Shape = tuple[int, ...]


def is_contiguous(shape: Sequence[int], stride: Sequence[int]) -> bool:
    """``TensorImpl::is_contiguous()`` (row-major): size-1 dims and empty tensors always pass."""
    if math.prod(shape) == 0:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride), strict=False):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], stride: Sequence[int]) -> bool:
    """``TensorImpl::is_non_overlapping_and_dense()``: contiguous (so any empty tensor), or
    ``compute_non_overlapping_and_dense`` (c10/core/Contiguity.h)."""
    if is_contiguous(shape, stride):
        return True
    ndim = len(shape)
    if ndim == 1:
        return shape[0] < 2 or stride[0] == 1
    # Sort dims by stride, size-0/1 dims last (std::sort with that comparator; ties
    # among equal strides cannot both pass the check below, so stability is moot).
    perm = sorted(range(ndim), key=lambda d: (shape[d] < 2, stride[d] if shape[d] >= 2 else 0))
    require = 1
    for d in perm:
        if shape[d] < 2:
            return True
        if stride[d] != require:
            return False
        require *= shape[d]
    return True


def infer_size(shape: Sequence[int], numel: int) -> Shape:
    """``at::infer_size``: resolve one ``-1`` in a view/reshape target against ``numel``."""
    shape = tuple(shape)
    if any(not isinstance(n, int) or isinstance(n, bool) or n < -1 for n in shape):
        raise InvalidArgument(f"invalid shape {list(shape)}")
    holes = [i for i, n in enumerate(shape) if n == -1]
    if len(holes) > 1:
        raise InvalidArgument("only one dimension can be inferred")
    known = math.prod(n for n in shape if n != -1)
    if holes:
        if known == 0:
            raise InvalidArgument(
                f"cannot reshape tensor of {numel} elements into shape {list(shape)}: "
                "the unspecified dimension could be any value"
            )
        if numel % known:
            raise InvalidArgument(f"shape {list(shape)} is invalid for input of size {numel}")
        shape = shape[: holes[0]] + (numel // known,) + shape[holes[0] + 1 :]
    elif known != numel:
        raise InvalidArgument(f"shape {list(shape)} is invalid for input of size {numel}")
    return shape


def compute_view_stride(
    old_shape: Sequence[int], old_stride: Sequence[int], new_shape: Sequence[int]
) -> Shape | None:
    """``at::detail::computeStride`` (TensorUtils.cpp): strides of a view, or None.

    None means the layout cannot be viewed with ``new_shape`` (``view`` raises, ``reshape``
    copies). ``new_shape`` must already be resolved (no ``-1``) with the same numel.
    """
    old_shape, old_stride, new_shape = tuple(old_shape), tuple(old_stride), tuple(new_shape)
    if not old_shape:
        return tuple(1 for _ in new_shape)
    numel = math.prod(old_shape)
    if numel == 0:
        if old_shape == new_shape:
            return old_stride
        return contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_stride[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1
            and old_stride[tensor_d - 1] != tensor_numel * chunk_base
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = old_stride[tensor_d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def _insertion_sort(perm: list[int], should_swap) -> list[int]:
    # The insertion sort with ambiguous comparisons shared by TensorIterator and
    # infer_dense_strides: a 0 answer keeps scanning left, a -1 stops.
    for i in range(1, len(perm)):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    return perm


def infer_dense_strides(shape: Sequence[int], stride: Sequence[int]) -> Shape:
    """``at::infer_dense_strides``: dense strides keeping the input's dim permutation."""
    ndim = len(shape)
    if ndim == 0:
        return ()
    if ndim == 1:
        return (1,)

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = stride[d0], stride[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    perm = _insertion_sort(list(range(ndim - 1, -1, -1)), should_swap)
    out = [0] * ndim
    cur = 1
    for d in perm:
        out[d] = cur
        if shape[d] > 1:
            cur *= shape[d]
    return tuple(out)


def empty_like_strides(shape: Sequence[int], stride: Sequence[int]) -> Shape:
    """Strides of ``at::empty_like(self, MemoryFormat::Preserve)`` (clone, flip)."""
    if is_non_overlapping_and_dense(shape, stride):
        return tuple(stride)
    return infer_dense_strides(shape, stride)


def _is_channels_last(shape: Sequence[int], stride: Sequence[int]) -> bool:
    # c10::is_channels_last_strides_2d_s4 / _3d_s5 (MemoryFormat.h).
    order = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}.get(len(shape))
    if order is None or stride[1] == 0:
        return False
    lo = 0
    for d in order:
        if shape[d] == 0 or stride[d] < lo:
            return False
        if d == 0 and lo == stride[1]:
            return False
        lo = stride[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def memory_format_strides(shape: Sequence[int], stride: Sequence[int]) -> str:
    """``suggest_memory_format()``: ``"channels_last"`` for 4-d/5-d such layouts, else ``"contiguous"``."""
    return "channels_last" if _is_channels_last(shape, stride) else "contiguous"


def channels_last_strides(shape: Sequence[int]) -> Shape:
    """``get_channels_last_strides_2d/3d``: NHWC (NDHWC) strides for an NCHW (NCDHW) shape."""
    order = (1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0)
    out = [0] * len(shape)
    cur = 1
    for d in order:
        out[d] = cur
        cur *= max(shape[d], 1)
    return tuple(out)


def tensor_iterator_strides(
    shape: Sequence[int], operands: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> Shape:
    """Strides of the output TensorIterator allocates for inputs ``(shape, stride)`` pairs.

    Mirrors ``TensorIteratorBase::build`` for an undefined output (TensorIterator.cpp):
    the fast setup (all inputs of one shape and all contiguous, all channels-last, or
    all non-overlapping-and-dense with equal strides), else ``compute_strides`` +
    ``reorder_dimensions`` + ``compatible_stride``. 0-d operands (wrapped scalars)
    count as operands of another shape. ``shape`` is the broadcast shape.
    """
    shape = tuple(shape)
    ndim = len(shape)
    ops = [(tuple(s), tuple(st)) for s, st in operands]
    if ops and all(s == ops[0][0] for s, _ in ops):
        if all(is_contiguous(s, st) for s, st in ops):
            return contiguous_strides(shape)
        if all(_is_channels_last(s, st) for s, st in ops):
            return channels_last_strides(shape)
        if all(is_non_overlapping_and_dense(s, st) for s, st in ops) and all(
            st == ops[-1][1] for _, st in ops
        ):
            return ops[-1][1]
    if ndim <= 1:
        return contiguous_strides(shape)
    strides = []
    for s, st in ops:
        off = ndim - len(s)
        full = [0] * ndim
        for i, (n, k) in enumerate(zip(s, st, strict=False)):
            full[off + i] = 0 if (n == 1 and shape[off + i] != 1) else k
        strides.append(full)

    def should_swap(d0: int, d1: int) -> int:
        for full in strides:
            s0, s1 = full[d0], full[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = _insertion_sort(list(range(ndim - 1, -1, -1)), should_swap)
    if perm == list(range(ndim - 1, -1, -1)):
        return contiguous_strides(shape)
    out = [0] * ndim
    cur = 1
    for d in perm:
        out[d] = cur
        cur *= shape[d]
    return tuple(out)
