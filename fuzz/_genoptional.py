"""Drawing an optional input and the ``None``-accepting statement that reads it.

Part of the generator core of :mod:`aliasfuzz.fuzz.strategies`. The rows of
:mod:`aliasfuzz.fuzz.ops.optional` (``optional_add``: ``x if y is None else torch.add(x, y)``)
take an ``Optional[Tensor]`` input that no other statement reads, so a row ``gen`` cannot
draw them: the input must be made for them. :func:`add_optional` adds a whole statement
to a drawn program: a fresh optional input ``o<i>`` on a storage of its own (``x``'s dtype;
its shape ``x``'s or a suffix of it, so the sum keeps ``x``'s shape), ``None`` or the tensor
in the program as drawn, the statement at a drawn place in the body, and its result
returned or, sometimes, written in place next (``add_.Scalar``: with ``y`` None that write
lands on ``x``'s storage, with a tensor on a fresh one). Both forms of the program, as
drawn and :func:`~aliasfuzz.fuzz.optional.toggled`, must validate
(:func:`~aliasfuzz.fuzz.validate.infer`): TorchScript's pipeline calls them alternately
(``TorchScriptOptions.toggle_optional``), so its profiled runs see one kind and its
optimized graph the other. Every other pipeline runs the form drawn, once.

It runs after the rest of the program is drawn, with a draw of its own in the sampler (its
stream is seeded from ``(seed, index)`` apart from the program's: adding the family left
every other program of a seed as it was). Shrinking: the choices sit behind booleans whose
False is the simple case (``None`` in the drawn form, the statement last, ``y`` of ``x``'s
full shape, no in-place write after it), and the shrinker drops the statement like any
other, then the unused input.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from aliasfuzz.errors import GenerationFailure
from aliasfuzz.fuzz._gentry import first_fit, fresh_name, taken_names
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides
from aliasfuzz.fuzz.optional import toggled

if TYPE_CHECKING:
    from aliasfuzz.fuzz.strategies import DrawBase, GenConfig, GenStats

__all__ = ["OPTIONAL_ROWS", "add_optional"]

#: The rows drawn, with the generator family each needs in ``cfg.families``.
OPTIONAL_ROWS: tuple[tuple[str, str], ...] = (("optional_add", "functional"),)


def add_optional(
    program: Program, draw: DrawBase, cfg: GenConfig, stats: GenStats | None = None
) -> Program:
    """``program`` with one optional input and a statement of :data:`OPTIONAL_ROWS` reading
    it, for a ``cfg.optional_share`` of draws; else ``program`` itself.

    Only when a row's family is in ``cfg.families``. Tries a few times
    (:func:`~aliasfuzz.fuzz._gentry.first_fit`, each try validated in both forms) and
    returns ``program`` unchanged when none fits; ``stats`` counts the
    tries per row as :class:`~aliasfuzz.fuzz.strategies.GenStats` does.
    ``meta["optional"]`` records the row.
    """
    rows = [r for r, fam in OPTIONAL_ROWS if fam in cfg.families]
    if not rows or not draw.boolean(cfg.optional_share):
        return program
    return first_fit(program, draw, rows, _draw_statement, "optional", stats, _toggled_valid)


def _toggled_valid(out: Program, row: str) -> None:
    """The toggled form validates too (TorchScript's pipeline calls it): raises
    :class:`InvalidArgument` as :func:`~aliasfuzz.fuzz.validate.infer` does."""
    from aliasfuzz.fuzz.validate import infer

    infer(toggled(out))


def _draw_statement(draw: DrawBase, program: Program, row: str) -> Program:
    from aliasfuzz.fuzz.validate import infer

    n = len(program.body)
    pos = n - draw.integer(0, n) if draw.boolean(0.5) else n  # shrinks toward "last"
    typed = infer(program.with_body(program.body[:pos], ()))
    targets = [(name, m) for name, m in typed.values.items()
               if m is not None and name not in typed.retired and m.dtype != "bool"]
    if not targets:
        raise GenerationFailure("no value to add an optional tensor to")
    x, xm = draw.choice(targets)
    taken = taken_names(program)
    cut = draw.integer(1, xm.ndim) if xm.ndim and draw.boolean(0.3) else 0  # a suffix broadcasts
    shape = tuple(xm.shape[cut:])
    init, args = ("randn", {"seed": draw.integer(0, 255)}) if xm.is_float and draw.boolean(0.3) else ("arange", {})
    st = StorageSpec(fresh_name("so", taken), max(math.prod(shape), 1), xm.dtype, init, args)
    y = TensorSpec(fresh_name("o", taken), st.name, shape, contiguous_strides(shape), 0,
                   optional=True, none=not draw.boolean(0.5))
    v = fresh_name("v", taken)
    ops = [Op(row, (x, y.name), {}, (v,))]
    if draw.boolean(0.3):  # written next: x's storage for None, a fresh one for a tensor
        other = 1.0 if xm.is_float else 1
        ops.append(Op("add_.Scalar", (v,), {"other": other}, (fresh_name("v", taken),)))
    body = (*program.body[:pos], *ops, *program.body[pos:])
    outputs = list(program.outputs)
    if v not in outputs:
        outputs.append(v)
    return Program(program.storages + (st,), program.inputs + (y,), body, tuple(outputs),
                   dict(program.meta))
