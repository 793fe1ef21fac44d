"""Sources of the ``@triton.jit`` kernels that launch rows (:mod:`.kernels`) run.

Each entry is the Python source of one kernel module (imports included), registered as a
prelude (:mod:`aliasfuzz.fuzz.preludes` writes it to a file: ``@triton.jit`` reads its
kernel's source file). Every kernel has one ``BLOCK`` constexpr and a Python shadow in
:mod:`._kernelgen` that lists the elements each program touches; the two must agree (the
unit tests run both). Kernels are float32 elementwise / strided loops without atomics:
determinism across the interpreter and a GPU only needs the launch to be race-free, which
validation checks on the shadow.
"""

from __future__ import annotations

__all__ = ["SOURCES"]

_HEAD = """
import triton
import triton.language as tl

"""

SOURCES: dict[str, str] = {
    # elementwise add writing an out argument, flat offsets (case b16)
    "fz_flat_add": _HEAD
    + """
@triton.jit
def fz_flat_add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)
""",
    # in-place scale of the first n elements, flat offsets
    "fz_scale_": _HEAD
    + """
@triton.jit
def fz_scale_(x_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)
""",
    # two mutated pointer arguments, written one after the other (case b15)
    "fz_scale_then_shift": _HEAD
    + """
@triton.jit
def fz_scale_then_shift(first_ptr, second_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(first_ptr + offs, tl.load(first_ptr + offs) * 10.0)
    tl.store(second_ptr + offs, tl.load(second_ptr + offs) + 1.0)
""",
    # partial write: doubles the rows marked in keep, skips the others (case b18)
    "fz_double_kept_rows": _HEAD
    + """
@triton.jit
def fz_double_kept_rows(x_ptr, keep_ptr, ncols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if tl.load(keep_ptr + row) == 0:
        return
    offs = tl.arange(0, BLOCK)
    mask = offs < ncols
    ptrs = x_ptr + row * row_stride + offs
    tl.store(ptrs, tl.load(ptrs, mask=mask) * 2.0, mask=mask)
""",
    # a runtime flag gates the store: with flag == 0 the kernel writes nothing, although
    # its TTIR holds a tt.store (Inductor's static analysis must still call x mutated)
    "fz_gated_scale_": _HEAD
    + """
@triton.jit
def fz_gated_scale_(x_ptr, n, flag, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if flag != 0:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)
""",
    # writes through an offset pointer: x.flat[off : off + n] *= alpha
    "fz_offset_scale_": _HEAD
    + """
@triton.jit
def fz_offset_scale_(x_ptr, off, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ptrs = x_ptr + off + offs
    tl.store(ptrs, tl.load(ptrs, mask=mask) * alpha, mask=mask)
""",
    # strided 2-d in-place scale: one program per row, BLOCK columns per program
    "fz_scale2d_": _HEAD
    + """
@triton.jit
def fz_scale2d_(x_ptr, M, N, s0, s1, alpha, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (cols < N) & (row < M)
    ptrs = x_ptr + row * s0 + cols * s1
    tl.store(ptrs, tl.load(ptrs, mask=mask) * alpha, mask=mask)
""",
    # out[i, j] = x[j, i] through both arguments' strides (reads at transposed positions)
    "fz_transpose_copy": _HEAD
    + """
@triton.jit
def fz_transpose_copy(x_ptr, out_ptr, M, N, xs0, xs1, os0, os1, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (j < N) & (i < M)
    v = tl.load(x_ptr + j * xs0 + i * xs1, mask=mask)
    tl.store(out_ptr + i * os0 + j * os1, v, mask=mask)
""",
    # out.flat[i] = x.flat[n - 1 - i] for i < n (reads at flipped positions)
    "fz_flip_copy": _HEAD
    + """
@triton.jit
def fz_flip_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + (n - 1 - offs), mask=mask)
    tl.store(out_ptr + offs, v, mask=mask)
""",
    # two outputs: s = a + b and d = a - b over the first n flat elements
    "fz_sum_diff": _HEAD
    + """
@triton.jit
def fz_sum_diff(a_ptr, b_ptr, s_ptr, d_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(s_ptr + offs, a + b, mask=mask)
    tl.store(d_ptr + offs, a - b, mask=mask)
""",
    # x is only read, each element by up to two lanes: out.flat[i] = x[i] + x[i + 1]
    "fz_pair_sums": _HEAD
    + """
@triton.jit
def fz_pair_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask) + tl.load(x_ptr + offs + 1, mask=mask)
    tl.store(out_ptr + offs, v, mask=mask)
""",
}
