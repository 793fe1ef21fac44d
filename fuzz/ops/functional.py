"""Functional ops: fresh storage out, arguments only read."""

from __future__ import annotations

import torch

from aliasfuzz.fuzz.ops._build import elementwise_infer, lit, require_float
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, fresh


def _binary(name: str, fn) -> list[OpDef]:
    """``torch.<name>(a, b)`` over two tensors, and ``a <op> scalar`` with ``other``."""
    return [
        OpDef(
            name=name,
            kind=OpKind.FUNCTIONAL,
            arity=2,
            infer=elementwise_infer,
            apply=lambda t, p, fn=fn: fn(t[0], t[1]),
            render=lambda e, p, name=name: f"torch.{name}({e[0]}, {e[1]})",
            doc=f"torch.{name}(a, b)",
        ),
        OpDef(
            name=f"{name}.Scalar",
            kind=OpKind.FUNCTIONAL,
            arity=1,
            infer=elementwise_infer,
            apply=lambda t, p, fn=fn: fn(t[0], p["other"]),
            render=lambda e, p, name=name: f"torch.{name}({e[0]}, {lit(p['other'])})",
            doc=f"torch.{name}(a, scalar)",
        ),
    ]


def _sin_infer(metas, params, outs):
    require_float(metas[0], "sin")
    return (fresh(outs[0], metas[0].shape, metas[0].dtype),)


OPS = [
    *_binary("add", torch.add),
    *_binary("mul", torch.mul),
    OpDef(
        name="sin",
        kind=OpKind.FUNCTIONAL,
        arity=1,
        infer=_sin_infer,
        apply=lambda t, p: torch.sin(t[0]),
        render=lambda e, p: f"torch.sin({e[0]})",
        doc="torch.sin(x)",
    ),
    OpDef(
        name="clone",
        kind=OpKind.FUNCTIONAL,
        arity=1,
        # clone keeps a non-overlapping, dense input's strides (memory_format=preserve);
        # the contiguous layout here is refined by the registry owner where it matters.
        infer=lambda m, p, o: (fresh(o[0], m[0].shape, m[0].dtype),),
        apply=lambda t, p: t[0].clone(),
        render=lambda e, p: f"{e[0]}.clone()",
        doc="x.clone()",
    ),
]
