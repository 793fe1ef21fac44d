"""Control-flow rows: a data-dependent branch and a bounded rotating-buffer loop.

The IR stays flat (no nested bodies): each row is one statement whose rendering is a
compound statement, header and body lines together. TorchScript's parser rejects a body
on the header line (``if c: x.add_(0)``), so the body goes on its own lines, indented for
a statement of the program's function (one level deeper than ``_INDENT`` of
:mod:`aliasfuzz.fuzz.render`): such a statement spans several source lines.

* ``if_lt_add_`` (case b13): ``if t[idx] < bound: t.add_(other)``. The condition reads a
  tensor element, so Dynamo breaks the graph there (``Tensor.__bool__`` is data
  dependent); TorchScript keeps it as ``prim::If``.
* ``loop_rotate3_accumulate`` (case b23): three buffers swap names every iteration
  (``p, q, r = r, p, q``) and the current one is incremented in place by ``v[i]``; ``seen``
  records it. Trips come from ``v``'s shape, so the loop stays a loop in TorchScript (its
  profiling executor is what case b23 exercises) while Dynamo unrolls it. The rotation
  rebinds loop-local names (``_p, _q, _r = p, q, r`` first), so the program's names keep
  their meaning (SSA) and only the buffers' contents change.
"""

from __future__ import annotations

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ops._build import can_cast, lit, result_dtype
from aliasfuzz.fuzz.ops.core import OpDef, OpKind

__all__ = ["OPS"]

# Loop counter name: leading underscore, so it cannot shadow a program value named by
# the generator (its names are letters and digits) -- hand-written IR must avoid it too.
_I = "_i"
# A new line of the program's function, and a body line (one level deeper).
_LINE = "\n" + " " * 4
_BODY = "\n" + " " * 8


def _index(params, ndim: int) -> tuple[int, ...]:
    idx = params["index"]
    if not isinstance(idx, list | tuple) or len(idx) != ndim:
        raise InvalidArgument(f"index must list one position per dim ({ndim}), got {idx!r}")
    return tuple(idx)


def _if_infer(metas, params, outs):
    (m,) = metas
    idx = _index(params, m.ndim)
    for i, n in zip(idx, m.shape, strict=True):
        if not isinstance(i, int) or isinstance(i, bool) or not -n <= i < n:
            raise InvalidArgument(f"index {idx!r} out of range for shape {m.shape}")
    for key in ("bound", "other"):
        v = params[key]
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise InvalidArgument(f"{key} must be a number, got {v!r}")
    if m.dtype == "bool":
        raise InvalidArgument("if_lt_add_ does not take a bool tensor")
    if not can_cast(result_dtype([m], params["other"]), m.dtype):
        raise InvalidArgument(f"cannot add {params['other']!r} to a {m.dtype} tensor in place")
    return ()


def _element(expr: str, idx) -> str:
    return f"{expr}[{', '.join(str(i) for i in idx)}]" if idx else expr


def _if_render(e, p):
    return (
        f"if {_element(e[0], p['index'])} < {lit(p['bound'])}:{_BODY}{e[0]}.add_({lit(p['other'])})"
    )


def _if_apply(t, p):
    x = t[0]
    if x[tuple(p["index"])] < p["bound"]:
        x.add_(p["other"])


def _if_gen(draw, metas):
    (m,) = metas
    if any(n == 0 for n in m.shape):
        raise GenerationFailure("if_lt_add_ needs a non-empty tensor")
    idx = [draw.integer(0, n - 1) for n in m.shape]
    return {"index": idx, "bound": draw.scalar(m.dtype), "other": draw.scalar(m.dtype)}


def _loop_infer(metas, params, outs):
    p, q, r, v, seen = metas
    if not p.shape == q.shape == r.shape or not p.dtype == q.dtype == r.dtype:
        raise InvalidArgument("loop_rotate3_accumulate: p, q, r need one shape and dtype")
    if p.ndim != 1 or p.shape[0] < 1:
        raise InvalidArgument("loop_rotate3_accumulate: p, q, r must be 1-d and non-empty")
    if v.ndim != 1 or seen.ndim != 1 or seen.shape[0] < v.shape[0]:
        raise InvalidArgument("loop_rotate3_accumulate: v and seen 1-d, len(seen) >= len(v)")
    if not can_cast(v.dtype, p.dtype) or not can_cast(p.dtype, seen.dtype):
        raise InvalidArgument("loop_rotate3_accumulate: dtypes do not cast")
    if p.dtype == "bool":
        raise InvalidArgument("loop_rotate3_accumulate does not take bool buffers")
    return ()


def _loop_render(e, prm):
    p, q, r, v, seen = e
    # loop-local names: the rotation rebinds them, never the program's own names
    lp, lq, lr = f"_{p}", f"_{q}", f"_{r}"
    return (
        f"{lp}, {lq}, {lr} = {p}, {q}, {r}{_LINE}for {_I} in range({v}.shape[0]):"
        f"{_BODY}{lp}, {lq}, {lr} = {lr}, {lp}, {lq}"
        f"{_BODY}{lp}[0] += {v}[{_I}]{_BODY}{seen}[{_I}] = {lp}[0]"
    )


def _loop_apply(t, prm):
    # the interpreter's environment is unchanged: only tensor contents are observable
    p, q, r, v, seen = t
    for i in range(v.shape[0]):
        p, q, r = r, p, q
        p[0] += v[i]
        seen[i] = p[0]


OPS = [
    OpDef(
        name="if_lt_add_",
        kind=OpKind.CONTROL,
        arity=1,
        infer=_if_infer,
        apply=_if_apply,
        render=_if_render,
        mutates=(0,),
        n_out=0,
        statement=True,
        doc="if t[index] < bound: t.add_(other) -- a data-dependent branch (graph break)",
        tags=frozenset({"graph_break"}),
        gen=_if_gen,
        accepts=lambda metas: metas[0].dtype != "bool" and metas[0].numel > 0,
    ),
    OpDef(
        name="loop_rotate3_accumulate",
        kind=OpKind.CONTROL,
        arity=5,
        infer=_loop_infer,
        apply=_loop_apply,
        render=_loop_render,
        mutates=(0, 1, 2, 4),
        n_out=0,
        statement=True,
        doc="for i in range(len(v)): p, q, r = r, p, q; p[0] += v[i]; seen[i] = p[0] "
        "(case b23; the rotation rebinds loop-local copies of the names)",
    ),
]
