"""Single-launch programs for the Triton launch rows, and what one launch did to memory.

Used by ``tests/unit/test_kernel_footprints.py`` (CPU, interpreter) and
``tests/gpu/test_kernel_launches_cuda.py`` (native launches): a program is inputs drawn
by the generator's own input drawer (strided, sliced, aliased views) plus one launch of
the row, with arguments filtered by the row's ``accepts`` and parameters from its
unthrottled ``gen``. Storages are filled with distinct random values so that every
element a launch writes changes.
"""

from __future__ import annotations

import itertools

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz._geninputs import draw_inputs
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.fuzz.ops import OpKind, lookup
from aliasfuzz.fuzz.ops.core import OpDef
from aliasfuzz.fuzz.strategies import make_config
from aliasfuzz.fuzz.validate import infer

#: rows whose kernels take 2-d arguments: their inputs are drawn with at most 2 dims
TWO_D = ("tk.scale2d_", "tk.transpose_copy")


def generated_rows() -> list[str]:
    """The library's launch rows that the generator draws (``tk.*`` with a ``gen``)."""
    from aliasfuzz.fuzz.ops import REGISTRY

    return [
        d.name
        for d in REGISTRY.values()
        if d.kind is OpKind.TRITON and d.gen is not None and d.name.startswith("tk.")
    ]


def launch_program(name: str, draw) -> Program:
    """Inputs and one launch of row ``name``, drawn through ``draw`` (a ``DrawBase``).

    Raises :class:`GenerationFailure` when the inputs admit no launch, or when validation
    refuses what ``gen`` drew (as the program generator, which then tries again: ``gen``
    does not foresee every overlap rule of ``fuzz/validate.py``).
    """
    d: OpDef = lookup(name)
    cfg = make_config(max_inputs=4, max_ndim=2 if name in TWO_D else 3, families=("triton",))
    storages, inputs = draw_inputs(draw, cfg)
    prog = Program(storages, inputs, (), (), {"generator": "test"})
    values = [(n, m) for n, m in infer(prog).values.items() if m is not None]
    combos = [
        c
        for c in itertools.product(values, repeat=d.arity)
        if d.accepts(tuple(m for _, m in c))
    ]
    if not combos:
        raise GenerationFailure("no argument tuple fits")
    combo = draw.choice(combos)
    params = d.gen.unthrottled(draw, [m for _, m in combo])
    p = prog.with_body((Op(name, tuple(n for n, _ in combo), params, ()),))
    try:
        infer(p)
    except InvalidArgument as e:
        raise GenerationFailure(str(e)) from None
    return p


def flat_storages(program: Program, inputs) -> dict[str, torch.Tensor]:
    """Each input storage as one flat tensor of its inputs' dtype (shares their memory)."""
    out = {}
    for spec, t in zip(program.inputs, inputs, strict=True):
        if t is not None and spec.storage not in out:
            out[spec.storage] = torch.empty(0, dtype=t.dtype, device=t.device).set_(
                t.untyped_storage()
            )
    return out


def fill_random(flat: dict[str, torch.Tensor], seed: int) -> None:
    """Overwrite every float storage with standard normal values (never 0, all distinct)."""
    g = torch.Generator().manual_seed(seed)
    for t in flat.values():
        if t.is_floating_point():
            t.copy_(torch.randn(t.numel(), generator=g, dtype=torch.float64).to(t.dtype))


def snapshot(flat: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in flat.items()}


def changed(before: dict, after: dict) -> set[tuple[str, int]]:
    """(storage, element) pairs whose bytes differ (NaN-safe: compared as raw bits)."""
    out = set()
    for k, b in before.items():
        a = after[k]
        diff = b.view(torch.int32) != a.view(torch.int32) if b.dtype == torch.float32 else b != a
        out |= {(k, int(i)) for i in diff.nonzero().flatten()}
    return out


def declared_writes(program: Program) -> set[tuple[str, int]]:
    """(storage, element) pairs in the written layouts of the program's launch."""
    (step,) = infer(program).steps
    return {
        (w.storage, e) for w in step.opdef.written(step.args, step.op.params) for e in w.elements()
    }
