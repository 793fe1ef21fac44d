"""User Triton kernel launches: ``@triton.jit`` kernels as preludes and one row per kernel.

A launch statement renders as ``kernel[grid](tensors..., scalars..., BLOCK=b)``. Its params
hold ``grid`` (a list of 1-3 entries), ``BLOCK`` and the kernel's scalar arguments by name.
A grid entry or int scalar is an int or a *layout expression* over the tensor arguments,
rendered as Python so that it follows dynamic shapes (float scalars are plain floats):

=====================  ==========================  ===============================
expression             rendered                    value
=====================  ==========================  ===============================
``"numel(i)"``          ``a.numel()``               elements of tensor argument i
``"size(i,d)"``         ``a.shape[d]``              its size along dim d
``"stride(i,d)"``       ``a.stride(d)``             its stride along dim d
``"cdiv(E,k)"``         ``((E) + k - 1) // k``      ceil(E / k), E one of the above
=====================  ==========================  ===============================

The library (sources in :mod:`._kernelsrc`; shadows, footprints and generators in
:mod:`._kernelgen`), by what it exercises:

==========================  ========================================================
family                      rows
==========================  ========================================================
elementwise out-of-place    ``tk.flat_add``
elementwise in place        ``tk.scale_``
masked / partial write      ``tk.gated_scale_`` (``flag == 0``: no write at all),
                            ``n < numel`` of the flat rows, partial 2-d extents
strided (stride arguments)  ``tk.scale2d_``, ``tk.transpose_copy``
offset pointer              ``tk.offset_scale_`` (``x_ptr + off``)
several outputs             ``tk.sum_diff``
same tensor twice           ``tk.scale_then_shift`` and any row given one value twice
flipped / transposed reads  ``tk.flip_copy``, ``tk.transpose_copy``
read-only arguments         ``tk.pair_sums`` (and the read arguments of the others)
data-dependent (no gen)     ``tk.double_kept_rows``
==========================  ========================================================

Each row's ``writes(metas, params)`` is the exact per-launch write footprint (``[]`` when
the launch writes nothing); ``mutates`` lists the pointer arguments the kernel may store
to and ``reads`` the other arguments it loads (a mutated argument's own loads are not
listed). Validation (``infer``) replays every launch on its shadow and rejects, with
:class:`InvalidArgument`, a launch that touches an element outside its argument's layout
or whose program lanes race on an element; generators only draw launches that pass.
Arguments are float32 only.

Under torch.compile a launch becomes ``triton_kernel_wrapper_mutation`` and, after
functionalization, ``triton_kernel_wrapper_functional`` with ``tensors_to_clone``
(``torch/_higher_order_ops/triton_kernel_wrap.py``). Rows are ``scriptable=False``.
``apply`` and the rendered source launch natively on a GPU; launches of the library's
kernels on plain CPU tensors run in Triton's interpreter
(``triton.runtime.interpreter.InterpretedFunction``; no driver needed), so the eager
reference runs anywhere. Under tracing on CPU the launch needs the compatibility layer of
``fuzz/triton_compat.py`` (``shared/notes/pytorch-seams.md`` section 4). Without an
importable triton this family is empty.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import preludes
from aliasfuzz.fuzz.ops import _kernelgen as kg
from aliasfuzz.fuzz.ops._kernelsrc import SOURCES
from aliasfuzz.fuzz.ops.core import ENUM_LIMIT, OpDef, OpKind

__all__ = [
    "OPS",
    "accesses",
    "eval_expr",
    "is_traced",
    "launch",
    "register_kernel",
    "render_expr",
]

_HAVE_TRITON = importlib.util.find_spec("triton") is not None


def is_traced(value: Any) -> bool:
    """Whether ``value`` is a tensor seen by a tracer (fake, functional, proxy) right now."""
    import torch

    if not isinstance(value, torch.Tensor):
        return False
    return type(value) is not torch.Tensor or torch._is_functional_tensor(value)


def _route_cpu_launches(kernel) -> None:
    """Make ``kernel[grid](...)`` on plain CPU tensors run in Triton's interpreter.

    A native launch needs a GPU driver. The instance's ``run`` (what
    ``JITFunction.__getitem__`` calls) sends launches whose tensors are all plain CPU
    tensors to ``InterpretedFunction``; anything else (CUDA tensors, tensors seen by a
    tracer) goes to the class's ``run``, patched or not by ``fuzz/triton_compat.py``.
    Plain tensors on several devices raise ``ValueError`` (a native launch refuses them as
    well); on the meta device, which holds no data, a launch does nothing.
    The object stays a ``JITFunction``, so Dynamo and Inductor's mutation analysis see it.
    """
    interpreted = []

    def run(*args, grid, warmup, **kwargs):
        import torch

        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        plain = tensors and not any(is_traced(t) for t in tensors)
        devices = {t.device.type for t in tensors}
        if plain and len(devices) > 1:
            # what a native launch refuses too: one kernel, one device
            raise ValueError(f"{kernel.fn.__name__}: tensor arguments on devices {sorted(devices)}")
        if plain and devices == {"meta"}:
            return None  # no data to compute on: shape/device checks only (programs on meta)
        if plain and devices == {"cpu"}:
            if not interpreted:
                from triton.runtime.interpreter import InterpretedFunction

                interpreted.append(InterpretedFunction(kernel.fn))
            return interpreted[0].run(*args, grid=grid, warmup=warmup, **kwargs)
        # looked up per call: triton_compat may patch JITFunction.run after this import
        return type(kernel).run(kernel, *args, grid=grid, warmup=warmup, **kwargs)

    kernel.run = run


def register_kernel(name: str, source: str) -> None:
    """Register kernel module ``source`` as prelude ``name`` (written to a file: ``@triton.jit``
    reads its source) and route its launches on plain CPU tensors to the interpreter."""
    preludes.register(name, source)
    _route_cpu_launches(getattr(preludes, name))


if _HAVE_TRITON:
    for _name, _src in SOURCES.items():
        register_kernel(_name, _src)


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
    """Launch ``kernel[grid](*args, **constexprs)``, as the rendered statement does.

    Where it runs is the kernel's own routing (:func:`_route_cpu_launches`, installed on
    every registered kernel): plain CPU tensors go to Triton's interpreter, which copies
    each distinct storage to the host once and back afterwards, so arguments sharing a
    storage (case b15) see each other's writes as on a GPU; CUDA and traced tensors take
    the native (or ``fuzz/triton_compat.py``) path.
    """
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
    gen=None,
    accepts=None,
    tags: frozenset[str] = frozenset(),
):
    """One launch row. ``bound(metas, values)`` raises if the launch would leave its
    arguments' footprints; ``writes(metas, values)`` gives the layouts it (may) write.
    ``reads`` lists the other arguments read, not a mutated argument's own elements.
    ``gen``/``accepts``/``tags`` are :class:`OpDef`'s (a row without ``gen`` is never
    generated). ``values`` are the launch parameters evaluated on the arguments' layouts."""

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
        gen=gen,
        accepts=accepts,
        tags=frozenset(tags),
    )




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
            if m.numel <= ENUM_LIMIT and not set(range(m.offset, m.offset + n)) <= m.elements():
                raise InvalidArgument(
                    f"flat kernel argument {i} is not dense: flat offsets leave its footprint"
                )
        if "n" in v and v["grid"][0] * v["BLOCK"] < n:
            raise InvalidArgument(f"grid {v['grid']} x BLOCK {v['BLOCK']} does not cover n={n}")

    return bound


def _flat_writes(*idx):
    """The first ``n`` storage elements from each written argument's offset: one layout per
    argument, with no element when ``n == 0`` (the library's own rows return ``[]`` then,
    through :func:`._kernelgen.writes_elementwise`; kept for rows built elsewhere)."""

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


#: row name -> its kernel's shadow (:mod:`._kernelgen`), for the rows that have one.
_SHADOWS: dict[str, kg.Shadow] = {}


def _shadowed(name: str, shadow: kg.Shadow, *checks):
    """A ``bound``: the row's own ``checks``, then the shadow's layout and race checks."""
    _SHADOWS[name] = shadow

    def bound(metas, v):
        for check in checks:
            check(metas, v)
        kg.check_launch(name, shadow, metas, v)

    return bound


def _covered(metas, v):
    if v["n"] < 0 or v.get("off", 0) < 0:
        raise InvalidArgument(f"negative n or offset: n={v['n']}, off={v.get('off', 0)}")
    if v["grid"][0] * v["BLOCK"] < v["n"]:
        raise InvalidArgument(f"grid {v['grid']} x BLOCK {v['BLOCK']} does not cover n={v['n']}")


def accesses(name: str, metas, params: dict) -> list[kg.Access]:
    """Every element launch ``name(metas, params)`` touches, replayed on its Python shadow.

    Each :class:`~._kernelgen.Access` is ``(arg, write, key, element)``: the argument
    index, whether it is a store, the program lane (``(pid, lane)``) and the storage
    element index (elements of float32). Raises :class:`InvalidArgument` for a row without
    a shadow (``tk.double_kept_rows``: what it writes depends on ``keep``'s values) or for
    parameters that do not evaluate.
    """
    if name not in _SHADOWS:
        raise InvalidArgument(f"{name} has no shadow")
    from aliasfuzz.fuzz.ops import lookup

    d = lookup(name)
    scalars = _SCALARS[name]
    v = _check_params(name, scalars, params, [(m.shape, m.stride) for m in metas])
    d.check_arity(len(metas))
    return list(_SHADOWS[name](metas, v))


_SCALARS: dict[str, tuple[str, ...]] = {}


def _kernel_row(name, kernel, arity, scalars, *, shadow, gen, checks=(), **kw):
    _SCALARS[name] = scalars
    bound = _shadowed(name, shadow, *checks)
    return _row(name, kernel, arity, scalars, bound=bound, gen=kg.throttled(gen), **kw)


def _library() -> list[OpDef]:
    f32 = kg.float32_only
    return [
        _kernel_row(
            "tk.flat_add",
            "fz_flat_add",
            3,
            ("n",),
            shadow=kg.shadow_elementwise((0, 1), (2,)),
            checks=(_flat_bound(0, 1, 2),),
            mutates=(2,),
            reads=(0, 1),
            writes=kg.writes_elementwise(2),
            gen=kg.gen_elementwise((0, 1, 2)),
            accepts=f32(3, written=(2,)),
            doc="fz_flat_add[grid](a, b, out, n, BLOCK): out.flat[:n] = a.flat[:n] + "
            "b.flat[:n] by storage offsets (reads layout; case b16)",
        ),
        _kernel_row(
            "tk.scale_",
            "fz_scale_",
            1,
            ("n", "alpha"),
            shadow=kg.shadow_elementwise((0,), (0,)),
            checks=(_flat_bound(0),),
            mutates=(0,),
            reads=(),
            writes=kg.writes_elementwise(0),
            gen=kg.gen_elementwise((0,), alpha=True),
            accepts=f32(1, written=(0,)),
            doc="fz_scale_[grid](x, n, alpha, BLOCK): x.flat[:n] *= alpha in place",
        ),
        _kernel_row(
            "tk.scale_then_shift",
            "fz_scale_then_shift",
            2,
            (),
            shadow=kg.shadow_scale_then_shift,
            checks=(_flat_bound(0, 1),),
            mutates=(0, 1),
            reads=(),
            writes=kg.writes_scale_then_shift,
            gen=kg.gen_scale_then_shift,
            accepts=f32(2, written=(0, 1)),
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
            tags=frozenset({"data_dependent"}),
            doc="fz_double_kept_rows[grid](x, keep, ncols, row_stride, BLOCK): doubles "
            "row r of x when keep[r] != 0, one program per row (case b18: partial write; "
            "writes is an upper bound, hand-written programs only)",
        ),
        _kernel_row(
            "tk.gated_scale_",
            "fz_gated_scale_",
            1,
            ("n", "flag", "alpha"),
            shadow=kg.shadow_elementwise((0,), (0,)),
            checks=(_covered,),
            mutates=(0,),
            reads=(),
            writes=kg.writes_elementwise(0),
            gen=kg.gen_elementwise((0,), alpha=True, flag=True),
            accepts=f32(1, written=(0,)),
            doc="fz_gated_scale_[grid](x, n, flag, alpha, BLOCK): x.flat[:n] *= alpha when "
            "flag != 0; with flag == 0 nothing is written (the store is still in the TTIR)",
        ),
        _kernel_row(
            "tk.offset_scale_",
            "fz_offset_scale_",
            1,
            ("off", "n", "alpha"),
            shadow=kg.shadow_elementwise((0,), (0,)),
            checks=(_covered,),
            mutates=(0,),
            reads=(),
            writes=kg.writes_elementwise(0),
            gen=kg.gen_offset_scale,
            accepts=f32(1, written=(0,)),
            doc="fz_offset_scale_[grid](x, off, n, alpha, BLOCK): x.flat[off:off + n] *= "
            "alpha through the pointer x_ptr + off",
        ),
        _kernel_row(
            "tk.scale2d_",
            "fz_scale2d_",
            1,
            ("M", "N", "s0", "s1", "alpha"),
            shadow=kg.shadow_scale2d,
            mutates=(0,),
            reads=(),
            writes=kg.writes_scale2d,
            gen=kg.gen_scale2d,
            accepts=f32(1, (2,), written=(0,)),
            doc="fz_scale2d_[grid](x, M, N, s0, s1, alpha, BLOCK): x[i*s0 + j*s1] *= alpha "
            "for i < M, j < N; one program per row i, BLOCK columns per program along grid "
            "dim 1 (strided writes through stride arguments)",
        ),
        _kernel_row(
            "tk.transpose_copy",
            "fz_transpose_copy",
            2,
            ("M", "N", "xs0", "xs1", "os0", "os1"),
            shadow=kg.shadow_transpose_copy,
            mutates=(1,),
            reads=(0,),
            writes=kg.writes_transpose_copy,
            gen=kg.gen_transpose_copy,
            accepts=f32(2, (2, 2), written=(1,)),
            doc="fz_transpose_copy[grid](x, out, M, N, xs0, xs1, os0, os1, BLOCK): "
            "out[i, j] = x[j, i] for i < M, j < N through both arguments' strides",
        ),
        _kernel_row(
            "tk.flip_copy",
            "fz_flip_copy",
            2,
            ("n",),
            shadow=kg.shadow_flip_copy,
            checks=(_covered,),
            mutates=(1,),
            reads=(0,),
            writes=kg.writes_elementwise(1),
            gen=kg.gen_elementwise((0, 1)),
            accepts=f32(2, written=(1,)),
            doc="fz_flip_copy[grid](x, out, n, BLOCK): out.flat[i] = x.flat[n - 1 - i] for "
            "i < n (reads at flipped positions)",
        ),
        _kernel_row(
            "tk.sum_diff",
            "fz_sum_diff",
            4,
            ("n",),
            shadow=kg.shadow_elementwise((0, 1), (2, 3)),
            checks=(_covered,),
            mutates=(2, 3),
            reads=(0, 1),
            writes=kg.writes_elementwise(2, 3),
            gen=kg.gen_elementwise((0, 1, 2, 3)),
            accepts=f32(4, written=(2, 3)),
            doc="fz_sum_diff[grid](a, b, s, d, n, BLOCK): s.flat[:n] = a + b and "
            "d.flat[:n] = a - b (two outputs; with s and d one tensor, d's store wins)",
        ),
        _kernel_row(
            "tk.pair_sums",
            "fz_pair_sums",
            2,
            ("n",),
            shadow=kg.shadow_pair_sums,
            checks=(_covered,),
            mutates=(1,),
            reads=(0,),
            writes=kg.writes_elementwise(1),
            gen=kg.gen_pair_sums,
            accepts=f32(2, written=(1,)),
            doc="fz_pair_sums[grid](x, out, n, BLOCK): out.flat[i] = x.flat[i] + "
            "x.flat[i + 1] for i < n; x is only read (neighbouring lanes share its elements)",
        ),
    ]


OPS: list[OpDef] = _library() if _HAVE_TRITON else []
