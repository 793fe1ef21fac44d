"""Autograd inside programs: ``torch.autograd.grad`` as a statement, and in-place writes
under ``torch.no_grad()`` (issue 15, the autograd bullet).

* ``autograd_grad`` (args ``y, x``; param ``retain_graph``): the gradient of ``y.sum()``
  with respect to ``x`` (a leaf input requiring grad, or an intermediate ``y`` was computed
  from), ``create_graph=False``, as a fresh contiguous tensor of ``x``'s shape and dtype:
  ``g = torch.autograd.grad(y.sum(), [x], retain_graph=R)[0].clone(memory_format=
  torch.contiguous_format)``. The clone fixes the layout: the engine may return an
  expanded gradient (``x.sum()``'s backward gives ``ones.expand``, stride 0), which no
  pipeline promises. ``g`` does not require grad. Whether eager takes the call (``y``
  requires grad, ``x`` is in ``y``'s graph, no tensor the graph saved was overwritten
  since) is decided by :mod:`aliasfuzz.fuzz.gradflow`.
* ``no_grad.<row>``: ``with torch.no_grad(): <in-place row>``, for the in-place rows of
  :data:`NO_GRAD_INNER`: eager lets such a write reach a leaf requiring grad or a view of
  one (``x[0].add_(1)``; refused outside ``no_grad``, rule ``leaf-inplace``). The row takes
  the inner row's arguments, parameters, shape rule and written operands (its schema is the
  inner row's), binds no name (the program reads the written tensor by its old name) and
  records no autograd history.

What Dynamo does with them (torch 2.13, checked by running; ``tests/unit/test_autograd_rows.py``):
``torch._dynamo.config.trace_autograd_ops`` is False by default, so
``torch.autograd.grad`` is a graph break ("using `torch.autograd.grad` with
`torch._dynamo.config.trace_autograd_ops=False`", ``torch/_dynamo/variables/torch.py``):
the graph before it is compiled, the call runs eagerly on that graph's outputs (through
AOTAutograd's ``CompiledFunction`` backward, so the backward graph of the first part runs
inside the program), and the rest compiles as a second graph. With the flag on, Dynamo
traces the call into one graph (not the harness's default). ``with torch.no_grad():``
is traced into the graph (no break); AOTAutograd treats the write as an input mutation
hidden from autograd (``mutations_under_no_grad_or_inference_mode``).
"""

from __future__ import annotations

from dataclasses import replace

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops import inplace
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, fresh

__all__ = ["GRAD", "NO_GRAD", "NO_GRAD_INNER", "OPS", "TAG", "inner_row"]

#: Tag of every row here (the coverage family ``autograd``).
TAG = "autograd"
#: Tag of the ``no_grad.<row>`` rows: their writes record no autograd history.
NO_GRAD = "no_grad"
GRAD = "autograd_grad"
#: The in-place rows wrapped in ``torch.no_grad()`` (first = the generator's shrink target).
NO_GRAD_INNER: tuple[str, ...] = (
    "add_.Scalar", "mul_.Scalar", "fill_", "zero_", "add_", "copy_",
    "setitem", "setitem.Scalar", "setitem_iadd.Scalar",
)
_FLOATS = ("float32", "float64", "float16", "bfloat16")
_BODY = "\n" + " " * 8  # a body line of a statement of the program's function


def inner_row(name: str) -> OpDef:
    """The in-place row a ``no_grad.<row>`` row wraps (InvalidArgument if ``name`` is not one)."""
    rows = {d.name: d for d in inplace.OPS}
    if not name.startswith(NO_GRAD + ".") or name[len(NO_GRAD) + 1:] not in rows:
        raise InvalidArgument(f"{name!r} is not a no_grad row")
    return rows[name[len(NO_GRAD) + 1:]]


def _grad_infer(metas, params, outs):
    y, x = metas
    if not (y.dtype in _FLOATS and x.dtype in _FLOATS):
        raise InvalidArgument("autograd_grad differentiates floating tensors only")
    if not isinstance(params.get("retain_graph"), bool):
        raise InvalidArgument("autograd_grad needs a bool retain_graph")
    return (fresh(outs[0], x.shape, x.dtype),)


def _grad_render(e, p):
    return (f"torch.autograd.grad({e[0]}.sum(), [{e[1]}], retain_graph={p['retain_graph']})[0]"
            ".clone(memory_format=torch.contiguous_format)")


def _grad_apply(t, p):
    import torch

    (g,) = torch.autograd.grad(t[0].sum(), [t[1]], retain_graph=p["retain_graph"])
    return g.clone(memory_format=torch.contiguous_format)


def _no_grad_row(d: OpDef) -> OpDef:
    def infer(metas, params, outs):
        d.infer(metas, params, ("_no_grad_result",) * (d.n_out or 0))
        return ()

    def apply(t, p):
        import torch

        with torch.no_grad():
            d.apply(t, p)

    return replace(
        d, name=f"{NO_GRAD}.{d.name}", infer=infer, apply=apply,
        render=lambda e, p: f"with torch.no_grad():{_BODY}{d.render(e, p)}",
        n_out=0, statement=True, gen=None,
        doc=f"with torch.no_grad(): {d.doc or d.name} -- no autograd history; may write a "
            "leaf requiring grad or a view of one",
        tags=frozenset({TAG, NO_GRAD}),
    )


OPS = [
    OpDef(
        name=GRAD, kind=OpKind.FUNCTIONAL, arity=2, infer=_grad_infer, apply=_grad_apply,
        render=_grad_render, mutates=(), scriptable=False, tags=frozenset({TAG}),
        doc="g = torch.autograd.grad(y.sum(), [x], retain_graph=R)[0], cloned contiguous: "
            "the gradient of an intermediate y with respect to a leaf input or an "
            "intermediate x (create_graph=False: g requires no grad)",
    ),
    *(_no_grad_row(d) for d in inplace.OPS if d.name in NO_GRAD_INNER),
]
