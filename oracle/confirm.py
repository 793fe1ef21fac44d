"""Confirmation by execution: no claim about a candidate is reported before it ran.

* A **missed reinplace** (the pass kept a copy, the ground truth says safe) is confirmed by
  running the same pipeline again with that candidate forced in place
  (:func:`aliasfuzz.oracle._capture.watch_reinplace`: dropped from ``tensors_to_clone`` /
  ``only_clone_these_tensors``, or the op swapped for its in-place form) on several inputs,
  and comparing each run with eager (values, inputs after the call, aliasing). Confirmed
  when the force took effect and every run agrees.
* An **unsafe reinplace** (the pass wrote in place, the ground truth gives a witness) is
  confirmed when the pipeline, as it decided, disagrees with eager on inputs built from the
  witness: the default inputs, seeded random fills, and the witness element of every input
  on the witness storage set to a value no other element holds.

Anything else stays unconfirmed, which the judge turns into ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from aliasfuzz.fuzz.eager import EagerResult, clone_inputs, run_callable
from aliasfuzz.oracle._capture import PassRecord, watch_reinplace
from aliasfuzz.oracle.candidates import Candidate
from aliasfuzz.oracle.differential import differential

__all__ = ["Confirmation", "confirm_missed", "confirm_unsafe", "input_variants"]


@dataclass(frozen=True)
class Confirmation:
    """Outcome of one confirmation: ``confirmed`` and what the runs showed."""

    confirmed: bool
    runs: int
    message: str


def input_variants(
    make: Callable[[], tuple[Any, ...]], n_random: int = 2, witness_byte: int | None = None
) -> list[tuple[Any, ...]]:
    """The default inputs, ``n_random`` seeded random refills of their floating storages
    (integers keep their values: they are often indices), and, with ``witness_byte``, one
    where the element covering that byte of every floating input storage is set to 1e4."""
    variants = [make()]
    for seed in range(1, n_random + 1):
        ins = make()
        g = torch.Generator().manual_seed(seed)
        for t in _float_storages(ins):
            flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage())
            with torch.no_grad():
                flat.copy_(torch.randn(flat.numel(), generator=g, dtype=torch.float64).to(flat))
        variants.append(ins)
    if witness_byte is not None:
        ins = make()
        for t in _float_storages(ins):
            flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage())
            k = witness_byte // t.element_size()
            if k < flat.numel():
                with torch.no_grad():
                    flat[k] = 1e4
        variants.append(ins)
    return variants


def _float_storages(inputs: Sequence[Any]) -> list[torch.Tensor]:
    seen, out = set(), []
    for t in inputs:
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            key = t.untyped_storage().data_ptr()
            if key not in seen:
                seen.add(key)
                out.append(t)
    return out


def _same(eager: EagerResult, got: EagerResult, names: Sequence[str]) -> str | None:
    """The first differential check that fails (an exception counts too)."""
    for c in differential(eager, got, names):
        if not c.passed:
            return f"{c.name}: {c.message}"
    return None


def _differs(eager: EagerResult, got: EagerResult, names: Sequence[str]) -> str | None:
    """The first value / input / aliasing difference; a run that raises shows none."""
    if eager.error is not None or got.error is not None:
        return None
    return _same(eager, got, names)


RunFn = Callable[[tuple[Any, ...]], EagerResult]


def confirm_missed(
    run: RunFn,
    fn: Callable,
    names: Sequence[str],
    variants: Sequence[tuple[Any, ...]],
    want: Callable[[int, Candidate], bool],
) -> Confirmation:
    """Force the candidates ``want`` selects and check every variant still matches eager.

    ``run(inputs)`` runs the pipeline under test on ``inputs`` and returns its result as an
    :class:`EagerResult` (``error`` set on a failure); ``fn`` is the eager program.
    """
    for i, ins in enumerate(variants):
        eager = run_callable_named(fn, names, clone_inputs(ins))
        records: list[PassRecord] = []
        with watch_reinplace(records, force=want, truths=False):
            got = run(clone_inputs(ins))
        forced = sum(s.forced for r in records for s in r.seen)
        if not forced:
            return Confirmation(False, i + 1, "the candidate could not be forced in place")
        why = _same(eager, got, names)
        if why is not None:
            return Confirmation(False, i + 1, f"forced reinplace disagrees with eager: {why}")
    return Confirmation(True, len(variants), f"forced in place, {len(variants)} runs agree with eager")


def confirm_unsafe(
    run: RunFn, fn: Callable, names: Sequence[str], variants: Sequence[tuple[Any, ...]]
) -> Confirmation:
    """Whether the pipeline, as decided, disagrees with eager on one of ``variants``."""
    for i, ins in enumerate(variants):
        eager = run_callable_named(fn, names, clone_inputs(ins))
        got = run(clone_inputs(ins))
        why = _differs(eager, got, names)
        if why is not None:
            return Confirmation(True, i + 1, f"variant {i} disagrees with eager: {why}")
    return Confirmation(False, len(variants), f"{len(variants)} runs agree with eager")


class _Names:
    """The bit of a Program that :func:`run_callable` reads: input names."""

    def __init__(self, names: Sequence[str]):
        self.inputs = [type("Input", (), {"name": n}) for n in names]


def run_callable_named(fn: Callable, names: Sequence[str], inputs: tuple[Any, ...]) -> EagerResult:
    """:func:`aliasfuzz.fuzz.eager.run_callable` for a plain function with named inputs."""
    return run_callable(fn, _Names(names), inputs)  # type: ignore[arg-type]
