"""Optional inputs whose None-ness can flip between calls, and the program in each form.

An input marked ``optional`` (:class:`~aliasfuzz.fuzz.ir.TensorSpec`) is rendered
``Optional[torch.Tensor]``; ``none`` makes it ``None`` in a run. It is *toggleable* when
every statement that reads it is a row tagged ``accepts_none``
(:data:`aliasfuzz.fuzz.ops.optional.ACCEPTS_NONE`) and it is not returned: the program
then means something both with ``None`` and with the tensor the spec describes.
:func:`toggled` is the program with those inputs flipped. TorchScript's pipeline calls the
two forms alternately (``TorchScriptOptions.toggle_optional``); the generator checks that
both forms validate (:mod:`aliasfuzz.fuzz._genoptional`) and the gradient marking keeps off
storages either form writes (:func:`aliasfuzz.fuzz.grads.mark_grad_leaves`).
"""

from __future__ import annotations

from dataclasses import replace

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.ops.optional import ACCEPTS_NONE

__all__ = ["toggleable", "toggled"]


def toggleable(program: Program) -> tuple[str, ...]:
    """Names of ``program``'s optional inputs that only ``accepts_none`` rows read and that
    are not outputs, in input order."""
    used = {a for op in program.body if ACCEPTS_NONE not in lookup(op.op).tags for a in op.args}
    used |= set(program.outputs)
    return tuple(t.name for t in program.inputs if t.optional and t.name not in used)


def toggled(program: Program) -> Program | None:
    """``program`` with the None-ness of its :func:`toggleable` inputs flipped (a ``None``
    input becomes the tensor its spec describes, a tensor becomes ``None``, and loses
    ``requires_grad``); None when it has none. ``meta`` is kept."""
    flip = set(toggleable(program))
    if not flip:
        return None
    inputs = tuple(
        replace(t, none=not t.none, requires_grad=t.requires_grad and t.none)
        if t.name in flip else t
        for t in program.inputs
    )
    return Program(program.storages, inputs, program.body, program.outputs, dict(program.meta))
