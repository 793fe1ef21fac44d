"""One eager meaning at the oracle's door: the validation rules, and a second eager opinion.

A finding is only worth reporting when eager itself means one thing. Two guards, both
called from :func:`aliasfuzz.oracle.judge.judge` (a clearly separated hook there):

* :func:`rule_rejection`, before anything runs: a :class:`~aliasfuzz.fuzz.ir.Program` that
  breaks a one-eager-meaning rule of :mod:`aliasfuzz.fuzz.validate` (``overlapping-writes``,
  ``partial-read-write-overlap``, ...) is ``invalid-program`` with the rule's name as its
  check. Generated programs never do (the generator validates every statement); replayed
  corpus entries, case twins and hand-written programs may.
* :func:`review`, after the verdict is known: when the verdict is a finding, the eager
  reference is computed a second way and must agree. The opinions (:data:`OPINIONS`):

  - ``deterministic``: ``torch.use_deterministic_algorithms(True)`` and one intra-op thread
    (``torch.set_num_threads(1)``), both restored afterwards;
  - ``other-device``: on a GPU host, the other device (CPU eager for a CUDA program, CUDA
    eager for a CPU program), inputs with the same layouts and aliasing.

  Each is compared with the first eager run by :func:`aliasfuzz.oracle.differential.differential`
  (values, inputs after the call, aliasing, requires_grad, with its tolerances and fp64
  shadow), in both directions, so that a rounding difference is excused whichever side is
  nearer the fp64 reference. A disagreement makes the run ``invalid-program`` with check
  ``undefined-eager`` (counted per reason in reports, never a finding). An opinion that
  cannot run (an op without a deterministic implementation raises, an op missing on the
  other device) is ``unavailable``: not a disagreement; the first verdict is kept and the
  explanation says so. Which opinions ran is recorded on the judgement (``opinions``).

Why only for findings: when the pipeline agrees with eager (``ok``) there is nothing to
report whatever eager means, and ``unknown`` / ``invalid-program`` are never findings; so
the second opinion costs a run or two per *finding*, not per program (``bench/opinions.py``
measures it). Running it inside the judge, not in the campaign driver, means every consumer
of verdicts sees the same answer: campaign tasks, the shrinker's re-judgements (a reduction
whose eager meaning is lost is not "the same failure" and is not kept), replay and ``check``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from aliasfuzz.errors import InvalidArgument, one_line
from aliasfuzz.fuzz.eager import EagerResult, clone_inputs
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.differential import differential
from aliasfuzz.oracle.verdict import Verdict

__all__ = [
    "OPINIONS",
    "UNDEFINED_EAGER",
    "Opinion",
    "deterministic_one_thread",
    "other_device",
    "review",
    "rule_rejection",
    "second_opinions",
]

#: The check name of a run rejected because eager disagrees with a second opinion.
UNDEFINED_EAGER = "undefined-eager"

#: opinion name -> how explanations name it ("eager disagrees with <label>").
OPINIONS: dict[str, str] = {
    "deterministic": "its deterministic single-thread run",
    "other-device": "eager on the other device",
}

AGREE, DISAGREE, UNAVAILABLE = "agree", "disagree", "unavailable"


@dataclass(frozen=True)
class Opinion:
    """One second opinion: ``name`` (a key of :data:`OPINIONS`), ``device`` it ran on,
    ``status`` (``agree`` / ``disagree`` / ``unavailable``) and what it saw."""

    name: str
    device: str
    status: str
    message: str = ""

    @property
    def label(self) -> str:
        return OPINIONS[self.name] if self.name != "other-device" else f"eager on {self.device}"

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "device": self.device, "status": self.status,
                "message": self.message}


def rule_rejection(subject: Any) -> tuple[str, str] | None:
    """``(rule, explanation)`` when ``subject`` is a Program that breaks a one-eager-meaning
    rule of :mod:`aliasfuzz.fuzz.validate`; None otherwise (also for a malformed program,
    which the judge's usual paths report)."""
    if not isinstance(subject, Program):
        return None
    from aliasfuzz.fuzz.validate import NoEagerMeaning, infer

    try:
        infer(subject)
    except NoEagerMeaning as e:
        return e.rule, str(e)
    except InvalidArgument:
        return None
    return None


@contextlib.contextmanager
def deterministic_one_thread() -> Iterator[None]:
    """``torch.use_deterministic_algorithms(True)`` and one intra-op thread inside the block;
    the previous mode (warn_only included) and thread count restored on exit."""
    det = torch.are_deterministic_algorithms_enabled()
    warn = torch.is_deterministic_algorithms_warn_only_enabled()
    threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(det, warn_only=warn)
        torch.set_num_threads(threads)


def other_device(device: str) -> str | None:
    """The other device of a host: ``cpu`` for a CUDA program, ``cuda`` for a CPU program
    when a GPU is there, else None."""
    if str(device).startswith("cuda"):
        return "cpu"
    return "cuda" if torch.cuda.is_available() else None


def moved(inputs: Sequence[Any], device: str) -> tuple[Any, ...]:
    """Copies of ``inputs`` on ``device`` with the same sizes, strides, offsets and storage
    sharing (each storage copied once, byte for byte); non-tensors passed through
    (:func:`aliasfuzz.fuzz.eager.clone_inputs` onto another device)."""
    return clone_inputs(inputs, device)


Runner = Callable[[], EagerResult]


def _first_failure(a: EagerResult, b: EagerResult, names, shadow) -> str | None:
    failed = [c for c in differential(a, b, names, shadow=shadow) if not c.passed]
    return f"{failed[0].name}: {failed[0].message}" if failed else None


def _compare(
    name: str, device: str, eager: EagerResult, second: EagerResult, names: Sequence[str],
    shadow: Callable[[], EagerResult | None] | None,
) -> Opinion:
    """The opinion ``second`` against ``eager`` (differential's checks, its wording with
    "compiled" read as "in the second opinion")."""
    if second.error is not None:
        return Opinion(name, device, UNAVAILABLE, one_line(second.error, 200))
    why = _first_failure(eager, second, names, shadow)
    if why is not None:
        why = why.replace(" compiled", " in the second opinion")
    else:  # the fp64 shadow excuses the side nearer to it: ask the other way round too
        why = _first_failure(second, eager, names, shadow)
        if why is not None:
            why = why.replace(" in eager", " in the second opinion").replace(" compiled", " in eager")
    if why is not None:
        return Opinion(name, device, DISAGREE, why)
    return Opinion(name, device, AGREE)


def second_opinions(
    eager: EagerResult,
    names: Sequence[str],
    deterministic: Runner,
    other: tuple[str, Runner] | None,
    device: str,
    shadow: Callable[[], EagerResult | None] | None = None,
) -> list[Opinion]:
    """Every opinion compared with ``eager`` (the first eager run): ``deterministic()`` runs
    the program under :func:`deterministic_one_thread` on fresh inputs on ``device``;
    ``other`` is ``(device, run)`` for the other device, or None. All opinions run (a
    campaign can count what each one alone caught). ``shadow`` is the fp64 reference run."""
    out = []
    with deterministic_one_thread():
        second = deterministic()
    out.append(_compare("deterministic", str(device), eager, second, names, shadow))
    if other is not None:
        dev, run = other
        out.append(_compare("other-device", dev, eager, run(), names, shadow))
    return out


def review(
    j: Any,
    subject: Any,
    run_on: Callable[[str], EagerResult],
    names: Sequence[str],
    device: str,
    shadow: Callable[[], EagerResult | None] | None = None,
) -> Any:
    """Turn ``j`` (a :class:`~aliasfuzz.oracle.judge.Judgement`) into ``invalid-program`` /
    ``undefined-eager`` when its verdict is a finding and a second opinion disagrees with its
    eager reference; record the opinions on ``j.opinions``; return ``j``.

    ``run_on(device)`` runs the eager program on fresh inputs on ``device`` (the same
    layouts and aliasing) and returns its result. Verdicts that are not findings, and runs
    whose eager reference raised, are returned untouched (no opinion runs).
    """
    if not j.verdict.is_finding or j.eager is None or j.eager.error is not None:
        return j
    other = other_device(device)
    opinions = second_opinions(
        j.eager, names, lambda: run_on(device),
        (other, lambda: run_on(other)) if other is not None else None, device, shadow,
    )
    j.opinions = opinions
    bad = [o for o in opinions if o.status == DISAGREE]
    if bad:
        first = f"{j.verdict.value}" + (f" ({j.check})" if j.check else "")
        j.verdict, j.check = Verdict.INVALID_PROGRAM, UNDEFINED_EAGER
        j.explanation = (
            f"eager disagrees with {' and '.join(o.label for o in bad)}; {bad[0].message}; "
            f"first verdict {first}: {j.explanation}"
        )
        return j
    missing = [o for o in opinions if o.status == UNAVAILABLE]
    if missing:
        why = "; ".join(f"{o.name}: {o.message}" for o in missing)
        j.explanation = f"{j.explanation}; second opinion unavailable ({why}): first verdict kept"
    return j
