"""Drawing the metadata rows of their own stream: ``resize_``, ``resize_as_``, ``set_``,
``set_.storage`` and ``requires_grad_`` (:mod:`aliasfuzz.fuzz.ops.metadata`, tag
``own_stream``).

Part of the generator core of :mod:`aliasfuzz.fuzz.strategies`. These rows have a ``gen``
like every row, but the statement draw leaves them out: adding them to the
``group:metadata`` slot would change which op every existing ``(seed, index)`` draws (tests
pin programs). :func:`add_metadata` adds one of them to a drawn program instead, with a draw
of its own in the sampler (its stream seeded from ``(seed, index)`` apart from the
program's and the advanced-indexing statement's), as :mod:`aliasfuzz.fuzz._genadvindex`
does.

The statement goes at a drawn place (most often last, since it retires the names of the
tensor it changes and later statements may read them); an output it retires is replaced
by its result, which is returned too when nothing else observes the change (a tensor that
is not a program input). A rebinding or resize may be followed by an in-place write of the
result (``x.set_(y); x.add_(1)`` writes ``y``'s memory: functionalization has to replay
it there, shared cases of issue 15). A ``requires_grad_`` is kept only when
:func:`aliasfuzz.fuzz.grads.grad_exclusion` finds every op its leaf reaches differentiable
(eager refuses ``out=`` ops of a value requiring grad). Shrinking: the choices sit behind
booleans whose False is the simple case (the statement last, no follow-up write).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aliasfuzz.errors import GenerationFailure
from aliasfuzz.fuzz._gentry import first_fit, fresh_name, taken_names
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.fuzz.ops import REGISTRY
from aliasfuzz.fuzz.ops.core import ValueMeta
from aliasfuzz.fuzz.ops.metadata import BASE_ONLY, OWN_STREAM, is_base, retires

if TYPE_CHECKING:
    from aliasfuzz.fuzz.strategies import DrawBase, GenConfig, GenStats

__all__ = ["META_ROWS", "add_metadata"]

#: The rows drawn (shrink order: the first is the target), all in the ``view`` family.
META_ROWS: tuple[str, ...] = tuple(n for n, d in REGISTRY.items() if OWN_STREAM in d.tags)
#: rows after which an in-place write of the result may follow
_REBINDS = ("resize_", "resize_as_", "set_", "set_.storage")


def add_metadata(
    program: Program, draw: DrawBase, cfg: GenConfig, stats: GenStats | None = None
) -> Program:
    """``program`` with one statement of :data:`META_ROWS` added, for a
    ``cfg.metadata_share`` of draws; else ``program`` itself.

    Only when ``view`` is in ``cfg.families``. Tries a few times (each try validated with
    :func:`~aliasfuzz.fuzz.validate.infer`) and returns ``program`` unchanged when none
    fits; ``stats`` counts the tries per row as
    :class:`~aliasfuzz.fuzz.strategies.GenStats` does. ``meta["metadata"]`` records the row.
    """
    if "view" not in cfg.families or not draw.boolean(cfg.metadata_share):
        return program
    from aliasfuzz.fuzz.grads import grad_exclusion

    def made_leaf_differentiable(out: Program, row: str) -> None:
        why = grad_exclusion(out)
        if why is not None and row == "requires_grad_":
            raise GenerationFailure(f"the made leaf reaches {why}")

    return first_fit(program, draw, META_ROWS, _draw_statement, "metadata", stats,
                     made_leaf_differentiable)


def _absolute_ok(m: ValueMeta, own: set[str], written: set[str]) -> bool:
    """Whether a layout taken by absolute storage positions on ``m`` (``resize_``,
    ``set_.storage``) may pass the ``layout-readout`` rule: ``m``'s storage unwritten so far,
    and an input's or ``m`` dense from offset 0 (:func:`~aliasfuzz.fuzz.layout_contract.anchored`)."""
    from aliasfuzz.fuzz.layout_contract import anchored

    return m.storage not in written and (m.storage in own or anchored(m))


def _args(draw: DrawBase, row: str, live: list[tuple[str, ValueMeta]], inputs: set[str],
          own: set[str], written: set[str]):
    """Argument names and layouts for ``row`` among the ``live`` values (``own``: input
    storages, ``written``: storages written before the statement)."""
    d = REGISTRY[row]
    xs = live
    if row in ("resize_", "resize_as_"):
        xs = [(n, m) for n, m in live if _absolute_ok(m, own, written)]
    if BASE_ONLY in d.tags:
        xs = [(n, m) for n, m in live if is_base(n, m, inputs)]
    if row == "requires_grad_":
        xs = [(n, m) for n, m in xs if m.is_float]
    if not xs:
        raise GenerationFailure(f"no value fits {row}")
    x, xm = draw.choice(xs)
    if d.arity == 1:
        return (x,), [xm]
    ys = [(n, m) for n, m in live if n != x and m.dtype == xm.dtype]
    if row == "set_.storage":
        ys = [(n, m) for n, m in ys if _absolute_ok(m, own, written)]
    if row == "resize_as_":
        from aliasfuzz.fuzz.ops.metadata import resize_room

        room = resize_room(xm)
        ys = [(n, m) for n, m in ys if m.shape == xm.shape or m.numel <= room]
    if not ys:
        raise GenerationFailure(f"no second argument fits {row}")
    y, ym = draw.choice(ys)
    return (x, y), [xm, ym]


def _draw_statement(draw: DrawBase, program: Program, row: str) -> Program:
    from aliasfuzz.fuzz.validate import infer

    n = len(program.body)
    pos = n - draw.integer(1, n) if n and draw.boolean(0.3) else n  # shrinks toward "last"
    typed = infer(program.with_body(program.body[:pos], ()))
    live = [(k, m) for k, m in typed.values.items() if m is not None and k not in typed.retired]
    inputs = {t.name for t in program.inputs}
    written = {m.storage for step in typed.steps for m in step.opdef.written(step.args, step.op.params)
               if m is not None}
    args, metas = _args(draw, row, live, inputs, {t.storage for t in program.inputs}, written)
    params = REGISTRY[row].gen(draw, metas)
    taken = taken_names(program, storages=False)
    res = fresh_name("v", taken)
    ops = [Op(row, args, params, (res,))]
    if row in _REBINDS and metas[0].dtype != "bool" and draw.boolean(0.4):
        other = 1.0 if metas[0].is_float else 1
        ops.append(Op("add_.Scalar", (res,), {"other": other}, (fresh_name("v", taken),)))
    gone = retires(typed.values, args[0]) if row != "requires_grad_" else set()
    outputs = [o for o in program.outputs if o not in gone]
    if res not in outputs and (args[0] not in inputs or len(outputs) < len(program.outputs)
                               or draw.boolean(0.5)):
        outputs.append(res)
    body = (*program.body[:pos], *ops, *program.body[pos:])
    return Program(program.storages, program.inputs, body, tuple(outputs), dict(program.meta))
