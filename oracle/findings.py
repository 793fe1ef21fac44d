"""Findings: a judgement that is a bug, as a JSON-able record with a dedupe signature.

The signature groups findings that are the same bug: the pipeline, the verdict, the check
that decided it, and for claims the candidate kind and ground-truth rule; for differential
findings the kinds of decisions the pass made (what machinery was involved). It ignores
names, values and sizes, so that shrinking and reseeding keep it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from aliasfuzz.oracle.verdict import Verdict

__all__ = ["Finding", "from_judgement", "signature"]


@dataclass(frozen=True)
class Finding:
    """One finding: verdict, where it was decided, why, and the witness of a claim."""

    verdict: str
    pipeline: str
    check: str | None
    explanation: str
    signature: str
    witness: dict[str, Any] | None = None
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _deciding_claim(j: Any) -> Any:
    for c in j.claims:
        if c.claim is j.verdict and c.confirmation is not None and c.confirmation.confirmed:
            return c
    return None


def signature(j: Any) -> str:
    """A short stable hash of what makes this judgement's bug this bug (see module doc)."""
    claim = _deciding_claim(j)
    parts: list[Any] = [j.pipeline, j.verdict.value, j.check]
    if claim is not None:
        w = claim.truth.witness
        parts += [claim.decision.kind, w.rule if w else None]
    else:
        parts += sorted({c.decision.kind for c in j.claims})
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]


def from_judgement(j: Any) -> Finding | None:
    """The :class:`Finding` of a judgement, or None when its verdict is not a finding."""
    if not Verdict(j.verdict).is_finding:
        return None
    claim = _deciding_claim(j)
    witness = None
    if claim is not None and claim.truth.witness is not None:
        w = claim.truth.witness
        witness = {
            "node": claim.decision.node, "arg": claim.decision.arg, "rule": w.rule,
            "byte": w.byte, "element": w.element, "index": list(w.index),
            "reader": w.reader, "reader_index": list(w.reader_index), "message": w.message,
        }
    decisions = [
        {"node": c.decision.node, "kind": c.decision.kind, "arg": c.decision.arg,
         "reinplaced": c.decision.reinplaced, "truth": c.truth.status if c.truth else "unknown"}
        for c in j.claims
    ]
    return Finding(j.verdict.value, j.pipeline, j.check, j.explanation, signature(j), witness, decisions)
