"""Drawing autograd statements into programs whose inputs require grad.

The rows of :mod:`aliasfuzz.fuzz.ops.autograd` only mean something where an input requires
grad, and the sampler decides that after the draw
(:func:`aliasfuzz.fuzz.grads.mark_grad_leaves`, its own stream). So :func:`add_autograd`
runs after the marking, with a stream of its own seeded from ``(seed, index)``
(:mod:`aliasfuzz.fuzz.sample`), as :mod:`aliasfuzz.fuzz._genadvindex` does: every program
it leaves alone is byte for byte what it was before the family existed. For a share
``cfg.autograd_share`` of marked programs it inserts, at a drawn place, one of:

* ``autograd_grad(y, x)``: ``y`` a floating value computed from a marked input, ``x`` that
  input or a fresh intermediate ``y`` was computed from; the gradient is returned, or first
  multiplied by ``x`` (a use of it);
* ``no_grad.<row>`` on a marked input (the leaf itself, or a row of it through the
  setitem forms), followed by ``sin`` of the leaf, returned, so that the values and the
  gradients after the write are observed.

Each try is validated (:func:`~aliasfuzz.fuzz.validate.infer`, whose ``autograd-grad``,
``leaf-inplace`` and ``multi-output-view`` rules decide), and kept only where eager's
backward of the shared loss runs (:func:`aliasfuzz.fuzz.gradflow.loss_refusal`: a
``retain_graph=False`` call or a ``no_grad`` write must not cost the gradient comparison);
for a program with a toggleable optional input (:mod:`aliasfuzz.fuzz._genoptional`) both
forms must pass; a program no try fits is returned unchanged. Shrinking: the
booleans' False is the simple case (the statement last, the first candidate, the gradient
returned as is, ``retain_graph=True``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aliasfuzz.errors import GenerationFailure
from aliasfuzz.fuzz._gentry import first_fit, fresh_name, taken_names
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.fuzz.ops import REGISTRY
from aliasfuzz.fuzz.ops.autograd import GRAD, NO_GRAD, NO_GRAD_INNER
from aliasfuzz.fuzz.optional import toggled

if TYPE_CHECKING:
    from aliasfuzz.fuzz.strategies import DrawBase, GenConfig, GenStats

__all__ = ["AUTOGRAD_SHARE", "add_autograd"]

#: Default share of programs with ``requires_grad`` inputs given an autograd statement.
AUTOGRAD_SHARE = 0.5
_FLOATS = ("float32", "float64", "float16", "bfloat16")


def add_autograd(program: Program, draw: DrawBase, cfg: GenConfig, stats: GenStats | None = None) -> Program:
    """``program`` with one autograd statement added, for a ``cfg.autograd_share`` of the
    programs with an input requiring grad; else ``program`` itself.

    ``stats`` counts tries per row as :class:`~aliasfuzz.fuzz.strategies.GenStats` does;
    ``meta["autograd"]`` records the row drawn."""
    marked = [t.name for t in program.inputs if t.requires_grad]
    if not marked or not draw.boolean(cfg.autograd_share):
        return program
    from aliasfuzz.fuzz.gradflow import loss_refusal
    from aliasfuzz.fuzz.validate import infer

    def row_of(d: DrawBase) -> str:
        return GRAD if d.boolean(0.5) else f"{NO_GRAD}.{d.choice(NO_GRAD_INNER)}"

    def make(d: DrawBase, p: Program, row: str) -> Program:
        return _grad(d, p, marked) if row == GRAD else _no_grad(d, p, marked, row)

    def backward_runs(out: Program, row: str) -> None:
        # TorchScript's odd calls run a program's toggled form (fuzz/optional.py): it must
        # validate and run its backward too (None for programs without an optional input)
        for form in (out, toggled(out)):
            if form is None:
                continue
            why = loss_refusal(form, infer(form).steps)
            if why is not None:  # keep the gradients observable: eager's backward must run
                raise GenerationFailure(f"eager's backward of the loss refuses: {why}")

    return first_fit(program, draw, row_of, make, "autograd", stats, backward_runs)


def _fresh(program: Program, prefix: str) -> str:
    return fresh_name(prefix, taken_names(program, storages=False))


def _position(draw: DrawBase, program: Program) -> int:
    n = len(program.body)
    return n - draw.integer(0, n) if draw.boolean(0.5) else n  # shrinks toward "last"


def _grad(draw: DrawBase, program: Program, marked: list[str]) -> Program:
    from aliasfuzz.fuzz.gradflow import requires_grad
    from aliasfuzz.fuzz.validate import infer

    pos = _position(draw, program)
    head = program.with_body(program.body[:pos], ())
    typed = infer(head)
    needs = requires_grad(head, typed.steps)
    ys = [n for n, m in typed.values.items()
          if m is not None and needs.get(n) and m.dtype in _FLOATS and n not in typed.retired]
    if not ys:
        raise GenerationFailure("no value requires grad here")
    y = draw.choice(ys)
    fresh = [n for n in ys if typed.values[n].storage == n and n != y]
    x = draw.choice(fresh) if fresh and draw.boolean(0.3) else draw.choice(marked)
    g = _fresh(program, "g")
    ops = [Op(GRAD, (y, x), {"retain_graph": not draw.boolean(0.25)}, (g,))]
    ret = g
    if draw.boolean(0.5):  # a use of the gradient: g * x (same shape and dtype)
        ret = _fresh(program, "u")
        ops.append(Op("mul", (g, x), {}, (ret,)))
    body = (*program.body[:pos], *ops, *program.body[pos:])
    return Program(program.storages, program.inputs, body, (*program.outputs, ret), dict(program.meta))


def _no_grad(draw: DrawBase, program: Program, marked: list[str], row: str) -> Program:
    from aliasfuzz.fuzz.validate import infer

    pos = _position(draw, program)
    x = draw.choice(marked)
    typed = infer(program.with_body(program.body[:pos], ()))
    inner = REGISTRY[row[len(NO_GRAD) + 1:]]
    xm = typed.values[x]
    args = [x]
    if inner.arity == 2:  # a source of the target's dtype that broadcasts: a value or x itself
        srcs = [n for n, m in typed.values.items() if m is not None and n not in typed.retired
                and m.dtype == xm.dtype and n != x]
        args.append(draw.choice(srcs) if srcs else x)
    metas = [typed.values[a] for a in args]
    if inner.accepts is not None and not inner.accepts(tuple(metas)):
        raise GenerationFailure(f"{inner.name} does not take these arguments")
    params = inner.gen(draw, metas)
    s = _fresh(program, "u")
    ops = [Op(row, tuple(args), params, ()), Op("sin", (x,), {}, (s,))]
    body = (*program.body[:pos], *ops, *program.body[pos:])
    return Program(program.storages, program.inputs, body, (*program.outputs, s), dict(program.meta))
