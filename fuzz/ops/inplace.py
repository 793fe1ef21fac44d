"""In-place ops: write into their first (or named) argument and return it."""

from __future__ import annotations

from aliasfuzz.fuzz.ops._build import inplace_infer, lit
from aliasfuzz.fuzz.ops.core import OpDef, OpKind

OPS = [
    OpDef(
        name="add_",
        kind=OpKind.INPLACE,
        arity=2,
        infer=inplace_infer,
        apply=lambda t, p: t[0].add_(t[1]),
        render=lambda e, p: f"{e[0]}.add_({e[1]})",
        mutates=(0,),
        doc="x.add_(y)",
    ),
    OpDef(
        name="add_.Scalar",
        kind=OpKind.INPLACE,
        arity=1,
        infer=inplace_infer,
        apply=lambda t, p: t[0].add_(p["other"]),
        render=lambda e, p: f"{e[0]}.add_({lit(p['other'])})",
        mutates=(0,),
        doc="x.add_(scalar)",
    ),
]
