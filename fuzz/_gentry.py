"""The try loop shared by the statements drawn on streams of their own.

Part of the generator core of :mod:`aliasfuzz.fuzz.strategies`. The families added to a
drawn program after the draw (:mod:`aliasfuzz.fuzz._genadvindex`,
:mod:`aliasfuzz.fuzz._genmeta`, :mod:`aliasfuzz.fuzz._genoptional`, :mod:`aliasfuzz.fuzz._genautograd`) each try a few statements and keep the first that
validates. The loop lives here once, so that every such family counts its tries in
:class:`~aliasfuzz.fuzz.strategies.GenStats` and records its row in ``meta`` the same way,
and draws in the same order (row, then the statement), which keeps their programs fixed
per ``(seed, index)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ir import Program

if TYPE_CHECKING:
    from aliasfuzz.fuzz.strategies import DrawBase, GenStats

__all__ = ["ATTEMPTS", "first_fit", "fresh_name", "taken_names"]

#: Tries per program before a family gives up and leaves the program as drawn.
ATTEMPTS = 6


def first_fit(
    program: Program,
    draw: DrawBase,
    rows: Sequence[str] | Callable[[DrawBase], str],
    make: Callable[[DrawBase, Program, str], Program],
    meta_key: str,
    stats: GenStats | None = None,
    check: Callable[[Program, str], None] | None = None,
) -> Program:
    """The first of :data:`ATTEMPTS` tries that validates, with ``meta[meta_key]`` set to
    its row; ``program`` itself when none does.

    Each try draws a row among ``rows`` (``draw.choice``; or ``rows(draw)`` when the family
    draws its row its own way), builds ``make(draw, program,
    row)`` and validates it with :func:`~aliasfuzz.fuzz.validate.infer`, then with
    ``check(out, row)`` when given; a try that raises :class:`GenerationFailure` or
    :class:`InvalidArgument` is counted in ``stats.rejected[row, rule]`` (the error's
    ``rule``, else its type's name) and the next one drawn. A kept try counts in
    ``stats.accepted[row]``. Other exceptions propagate (a bug of the family, not a
    refusal).
    """
    from aliasfuzz.fuzz.validate import infer

    for _ in range(ATTEMPTS):
        row = rows(draw) if callable(rows) else draw.choice(rows)
        try:
            out = make(draw, program, row)
            infer(out)
            if check is not None:
                check(out, row)
        except (GenerationFailure, InvalidArgument) as e:
            if stats is not None:
                stats.rejected[row, getattr(e, "rule", type(e).__name__)] += 1
            continue
        if stats is not None:
            stats.accepted[row] += 1
        return Program(out.storages, out.inputs, out.body, out.outputs, {**out.meta, meta_key: row})
    return program


def taken_names(program: Program, storages: bool = True) -> set[str]:
    """Every name ``program`` binds: its inputs, its statements' results and, with
    ``storages``, its storages."""
    names = {t.name for t in program.inputs} | {o for op in program.body for o in op.out}
    return names | {s.name for s in program.storages} if storages else names


def fresh_name(prefix: str, taken: set[str]) -> str:
    """The first ``prefix<k>`` (k = 0, 1, ...) not in ``taken``, added to ``taken``."""
    name = next(f"{prefix}{i}" for i in itertools.count() if f"{prefix}{i}" not in taken)
    taken.add(name)
    return name
