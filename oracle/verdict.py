"""Verdicts: one ordered enum, worst first among findings; ``unknown``, ``unsupported`` and
``invalid-program`` are neither pass nor bug.

``unsupported`` is a pipeline's clean, documented refusal of a valid program (Dynamo's
``Unsupported``, a "not supported" ``NotImplementedError``, a TorchScript frontend error, a
by-design limit of a pipeline: the rule table :data:`aliasfuzz.oracle.refusals.REFUSALS`);
``invalid-program`` a program without one eager meaning (eager raises, or a validation rule
rejects it). Both are counted per reason in reports, never findings (oracle/README.md says
why they are two members).
"""

from __future__ import annotations

import enum

__all__ = ["FINDINGS", "Verdict"]


class Verdict(enum.Enum):
    """Per program and pipeline. Order matters: a run reports its most severe verdict."""

    OK = "ok"
    MISCOMPILE = "miscompile"
    UNSAFE_REINPLACE = "unsafe-reinplace"
    MISSED_REINPLACE = "missed-reinplace"
    INVARIANT = "invariant"
    CRASH = "crash"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"
    UNSUPPORTED = "unsupported"
    INVALID_PROGRAM = "invalid-program"

    @property
    def rank(self) -> int:
        return list(Verdict).index(self)

    @property
    def severity(self) -> tuple[int, int]:
        """Sort key, most severe first: findings by rank, then unknown, then unsupported and
        invalid-program (one tier: neither pass nor bug, not judged), then ok."""
        tier = {
            Verdict.UNKNOWN: 1,
            Verdict.UNSUPPORTED: 2,
            Verdict.INVALID_PROGRAM: 2,
            Verdict.OK: 3,
        }.get(self, 0)
        return (tier, self.rank)

    @property
    def is_finding(self) -> bool:
        return self in FINDINGS

    @classmethod
    def parse(cls, text: str) -> Verdict:
        from aliasfuzz.errors import InvalidArgument

        try:
            return cls(text)
        except ValueError:
            names = ", ".join(v.value for v in cls)
            raise InvalidArgument(f"unknown verdict {text!r} (one of: {names})") from None


FINDINGS = frozenset(
    {
        Verdict.MISCOMPILE,
        Verdict.UNSAFE_REINPLACE,
        Verdict.MISSED_REINPLACE,
        Verdict.INVARIANT,
        Verdict.CRASH,
        Verdict.TIMEOUT,
    }
)
