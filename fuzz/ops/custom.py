"""Custom ops registered with ``torch.library.custom_op`` in the ``aliasfuzz`` namespace.

Each op's definition is a prelude (:mod:`aliasfuzz.fuzz.preludes`): one source text, run
once in-process and pasted verbatim into standalone repros. Their ``mutates_args`` make
Dynamo/AOTAutograd wrap them in ``auto_functionalized`` (v1) or ``auto_functionalized_v2``,
whose clones are what Inductor's reinplace pass decides on
(``torch/_inductor/fx_passes/reinplace.py``).
"""

from __future__ import annotations

from aliasfuzz.fuzz import preludes
from aliasfuzz.fuzz.ops.core import OpDef, OpKind

preludes.register(
    "fz_add_one_",
    '''
@torch.library.custom_op("aliasfuzz::add_one_", mutates_args=("x",))
def fz_add_one_(x: torch.Tensor) -> None:
    x.add_(1)
''',
)


def _mutating_none(metas, params, outs):
    return ()


OPS = [
    OpDef(
        name="fz.add_one_",
        kind=OpKind.CUSTOM,
        arity=1,
        infer=_mutating_none,
        apply=lambda t, p: preludes.fz_add_one_(t[0]),
        render=lambda e, p: f"fz_add_one_({e[0]})",
        mutates=(0,),
        n_out=0,
        prelude=("fz_add_one_",),
        doc="aliasfuzz::add_one_(Tensor(a!) x) -> (): x += 1 in place",
    ),
]
