"""User Triton kernel launches: ``@triton.jit`` kernels as preludes and one row per kernel.

A launch statement renders as ``kernel[grid](tensors..., scalars..., BLOCK=b)``. Its params
hold ``grid`` (a list of 1-3 entries), ``BLOCK`` and the kernel's scalar arguments by name.
A grid entry or scalar is an int or a *layout expression* over the tensor arguments,
rendered as Python so that it follows dynamic shapes:

=====================  ==========================  ===============================
expression             rendered                    value
=====================  ==========================  ===============================
``"numel(i)"``          ``a.numel()``               elements of tensor argument i
``"size(i,d)"``         ``a.shape[d]``              its size along dim d
``"stride(i,d)"``       ``a.stride(d)``             its stride along dim d
``"cdiv(E,k)"``         ``((E) + k - 1) // k``      ceil(E / k), E one of the above
=====================  ==========================  ===============================

Under torch.compile a launch becomes ``triton_kernel_wrapper_mutation`` and, after
functionalization, ``triton_kernel_wrapper_functional`` with ``tensors_to_clone``
(``torch/_higher_order_ops/triton_kernel_wrap.py``). Rows are ``scriptable=False`` and
have no ``gen`` yet. ``apply`` runs CPU tensors through Triton's interpreter
(``triton.runtime.interpreter.InterpretedFunction``; no driver needed) and other devices
through the native launch. The *rendered* source launches natively, so on CPU it needs the
interpreter routing of ``passes/triton_compat.py`` (see ``shared/notes/pytorch-seams.md``
section 4). Without an importable triton this family is empty.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import preludes
from aliasfuzz.fuzz.ops.core import OpDef, OpKind

__all__ = ["OPS", "eval_expr", "launch", "render_expr"]

_HAVE_TRITON = importlib.util.find_spec("triton") is not None

_KERNELS = {
    # elementwise add writing an out argument, flat offsets (case b16)
    "fz_flat_add": """
import triton
import triton.language as tl


@triton.jit
def fz_flat_add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)
""",
    # in-place scale of the first n elements, flat offsets
    "fz_scale_": """
import triton
import triton.language as tl


@triton.jit
def fz_scale_(x_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)
""",
    # two mutated pointer arguments, written one after the other (case b15)
    "fz_scale_then_shift": """
import triton
import triton.language as tl


@triton.jit
def fz_scale_then_shift(first_ptr, second_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(first_ptr + offs, tl.load(first_ptr + offs) * 10.0)
    tl.store(second_ptr + offs, tl.load(second_ptr + offs) + 1.0)
""",
    # partial write: doubles the rows marked in keep, skips the others (case b18)
    "fz_double_kept_rows": """
import triton
import triton.language as tl


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
}

if _HAVE_TRITON:
    for _name, _src in _KERNELS.items():
        preludes.register(_name, _src)


# -- layout expressions ----------------------------------------------------------------
_ATOM = re.compile(r"^(numel)\((\d+)\)$|^(size|stride)\((\d+),\s*(-?\d+)\)$")
_CDIV = re.compile(r"^cdiv\((.+),\s*(\d+)\)$")


def _parse(expr: Any, n_args: int):
    """``expr`` as ('int', v) | (kind, i, d) | ('cdiv', inner, k); InvalidArgument if bad."""
    if isinstance(expr, int) and not isinstance(expr, bool):
        return ("int", expr)
    if not isinstance(expr, str):
        raise InvalidArgument(f"launch parameter {expr!r} is neither an int nor an expression")
    m = _CDIV.match(expr.strip())
    if m:
        k = int(m.group(2))
        if k <= 0:
            raise InvalidArgument(f"cdiv by {k} in {expr!r}")
        return ("cdiv", _parse(m.group(1).strip(), n_args), k)
    m = _ATOM.match(expr.strip())
    if not m:
        raise InvalidArgument(f"launch parameter {expr!r} is not a layout expression")
    kind, i, d = (
        (m.group(1), int(m.group(2)), 0)
        if m.group(1)
        else (
            m.group(3),
            int(m.group(4)),
            int(m.group(5)),
        )
    )
    if i >= n_args:
        raise InvalidArgument(f"{expr!r} names tensor argument {i}, the launch has {n_args}")
    return (kind, i, d)


def eval_expr(expr: Any, layouts: Sequence[tuple[Sequence[int], Sequence[int]]]) -> int:
    """Value of a launch parameter given each tensor argument's ``(shape, stride)``.

    Raises :class:`InvalidArgument` on a malformed expression or a dim out of range.
    """
    tree = _parse(expr, len(layouts))
    return _eval(tree, layouts)


def _eval(tree, layouts) -> int:
    kind = tree[0]
    if kind == "int":
        return tree[1]
    if kind == "cdiv":
        return -(-_eval(tree[1], layouts) // tree[2])
    shape, stride = layouts[tree[1]]
    if kind == "numel":
        out = 1
        for n in shape:
            out *= n
        return out
    d = tree[2]
    if not -len(shape) <= d < len(shape):
        raise InvalidArgument(f"dim {d} out of range for argument {tree[1]} ({len(shape)}-d)")
    return (shape if kind == "size" else stride)[d]


def render_expr(expr: Any, arg_exprs: Sequence[str]) -> str:
    """Python source of a launch parameter, in terms of the tensor argument expressions."""
    return _render(_parse(expr, len(arg_exprs)), arg_exprs)


def _render(tree, e) -> str:
    kind = tree[0]
    if kind == "int":
        return str(tree[1])
    if kind == "cdiv":
        k = tree[2]
        return f"(({_render(tree[1], e)}) + {k - 1}) // {k}"
    if kind == "numel":
        return f"{e[tree[1]]}.numel()"
    if kind == "size":
        return f"{e[tree[1]]}.shape[{tree[2]}]"
    return f"{e[tree[1]]}.stride({tree[2]})"


# -- launching -------------------------------------------------------------------------
def launch(kernel, grid: Sequence[int], *args: Any, **constexprs: Any) -> None:
    """Launch ``kernel[grid](*args, **constexprs)``; CPU tensors go through the interpreter.

    The interpreter copies each distinct storage to the host once and back afterwards, so
    arguments sharing a storage (case b15) see each other's writes as on a GPU.
    """
    import torch

    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if tensors and all(t.device.type == "cpu" for t in tensors):
        from triton.runtime.interpreter import InterpretedFunction

        fn = getattr(kernel, "fn", kernel)  # a JITFunction, or a plain function
        InterpretedFunction(fn)[tuple(grid)](*args, **constexprs)
    else:
        kernel[tuple(grid)](*args, **constexprs)


def _layouts(tensors) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(tuple(t.shape), tuple(t.stride())) for t in tensors]


def _check_params(name: str, scalars: tuple[str, ...], params: dict, layouts) -> dict:
    grid = params["grid"]
    if not isinstance(grid, list | tuple) or not 1 <= len(grid) <= 3:
        raise InvalidArgument(f"{name}: grid must list 1 to 3 entries, got {grid!r}")
    g = [eval_expr(x, layouts) for x in grid]
    if any(v < 0 for v in g):
        raise InvalidArgument(f"{name}: negative grid {g}")
    block = params["BLOCK"]
    if not isinstance(block, int) or block <= 0 or block & (block - 1):
        raise InvalidArgument(f"{name}: BLOCK must be a power of two, got {block!r}")
    values = {}
    for s in scalars:
        v = params[s]
        # float scalars (scale factors) are passed as they are; ints may be expressions
        values[s] = v if isinstance(v, float) else eval_expr(v, layouts)
    extra = set(params) - {"grid", "BLOCK", *scalars}
    if extra:
        raise InvalidArgument(f"{name}: unknown launch parameters {sorted(extra)}")
    return {"grid": g, "BLOCK": block, **values}


def _row(
    name: str,
    kernel: str,
    arity: int,
    scalars: tuple[str, ...],
    *,
    mutates,
    reads,
    bound,
    writes,
    doc,
):
    """One launch row. ``bound(metas, values)`` raises if the launch would leave its
    arguments' footprints; ``writes(metas, values)`` gives the layouts it (may) write.
    ``reads`` lists the other arguments read, not a mutated argument's own elements."""

    def values_of(metas, params):
        return _check_params(name, scalars, params, [(m.shape, m.stride) for m in metas])

    def infer(metas, params, outs):
        bound(metas, values_of(metas, params))
        return ()

    def apply(t, p):
        v = _check_params(name, scalars, p, _layouts(t))
        launch(getattr(preludes, kernel), v["grid"], *t, *(v[s] for s in scalars), BLOCK=v["BLOCK"])

    def render(e, p):
        grid = ", ".join(render_expr(x, e) for x in p["grid"])
        grid = f"({grid},)" if len(p["grid"]) == 1 else f"({grid})"
        sc = [repr(p[s]) if isinstance(p[s], float) else render_expr(p[s], e) for s in scalars]
        return f"{kernel}[{grid}]({', '.join([*e, *sc])}, BLOCK={p['BLOCK']})"

    return OpDef(
        name=name,
        kind=OpKind.TRITON,
        arity=arity,
        infer=infer,
        apply=apply,
        render=render,
        mutates=mutates,
        reads=reads,
        writes=lambda metas, params: writes(metas, values_of(metas, params)),
        n_out=0,
        statement=True,
        prelude=(kernel,),
        scriptable=False,
        doc=doc,
    )


# Above this many elements the dense-footprint check is skipped (programs are small).
_ENUM_LIMIT = 1 << 16


def _flat_bound(*idx):
    """Flat kernels touch storage elements ``offset .. offset + n - 1`` of each argument:
    they must lie in the argument's footprint (a dense layout, in any dim order)."""

    def bound(metas, v):
        n = v.get("n", v["BLOCK"])
        for i in idx:
            m = metas[i]
            if n > m.numel:
                raise InvalidArgument(
                    f"flat kernel reads {n} elements of a {m.numel}-element tensor"
                )
            if m.numel <= _ENUM_LIMIT and not set(range(m.offset, m.offset + n)) <= m.elements():
                raise InvalidArgument(
                    f"flat kernel argument {i} is not dense: flat offsets leave its footprint"
                )
        if "n" in v and v["grid"][0] * v["BLOCK"] < n:
            raise InvalidArgument(f"grid {v['grid']} x BLOCK {v['BLOCK']} does not cover n={n}")

    return bound


def _flat_writes(*idx):
    """The first ``n`` storage elements from each written argument's offset."""

    def writes(metas, v):
        n = v.get("n", v["BLOCK"])
        return [
            metas[i] if n == metas[i].numel else metas[i].view((n,), (1,), metas[i].offset)
            for i in idx
        ]

    return writes


def _rows_writes(metas, v):
    # may-write: which of these rows are written depends on keep's values
    x = metas[0]
    shape = (v["grid"][0], v["ncols"])
    return [x if shape == x.shape else x.view(shape, (v["row_stride"], 1), x.offset)]


def _rows_bound(metas, v):
    x, keep = metas
    if x.ndim != 2 or keep.ndim != 1:
        raise InvalidArgument("fz.double_kept_rows: x must be 2-d and keep 1-d")
    if v["grid"][0] > min(x.shape[0], keep.shape[0]):
        raise InvalidArgument(f"fz.double_kept_rows: grid {v['grid']} exceeds the rows")
    if v["ncols"] > x.shape[1] or v["ncols"] > v["BLOCK"]:
        raise InvalidArgument("fz.double_kept_rows: ncols exceeds the row or BLOCK")
    if x.shape[1] > 1 and x.stride[1] != 1 or x.shape[0] > 1 and v["row_stride"] != x.stride[0]:
        raise InvalidArgument(
            "fz.double_kept_rows: rows must have unit column stride and row_stride"
        )


OPS: list[OpDef] = []
if _HAVE_TRITON:
    OPS = [
        _row(
            "tk.flat_add",
            "fz_flat_add",
            3,
            ("n",),
            mutates=(2,),
            reads=(0, 1),
            bound=_flat_bound(0, 1, 2),
            writes=_flat_writes(2),
            doc="fz_flat_add[grid](a, b, out, n, BLOCK): out.flat[:n] = a.flat[:n] + "
            "b.flat[:n] by storage offsets (reads layout; case b16)",
        ),
        _row(
            "tk.scale_",
            "fz_scale_",
            1,
            ("n", "alpha"),
            mutates=(0,),
            reads=(),
            bound=_flat_bound(0),
            writes=_flat_writes(0),
            doc="fz_scale_[grid](x, n, alpha, BLOCK): x.flat[:n] *= alpha in place",
        ),
        _row(
            "tk.scale_then_shift",
            "fz_scale_then_shift",
            2,
            (),
            mutates=(0, 1),
            reads=(),
            bound=_flat_bound(0, 1),
            writes=_flat_writes(0, 1),
            doc="fz_scale_then_shift[grid](first, second, BLOCK): first.flat[:BLOCK] *= 10, "
            "then second.flat[:BLOCK] += 1 (case b15: the same tensor twice)",
        ),
        _row(
            "tk.double_kept_rows",
            "fz_double_kept_rows",
            2,
            ("ncols", "row_stride"),
            mutates=(0,),
            reads=(1,),
            bound=_rows_bound,
            writes=_rows_writes,
            doc="fz_double_kept_rows[grid](x, keep, ncols, row_stride, BLOCK): doubles "
            "row r of x when keep[r] != 0, one program per row (case b18: partial write)",
        ),
    ]
