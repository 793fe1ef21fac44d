"""Judging a generated program on one pipeline in a test (the property suites of the
generator's families)."""

from __future__ import annotations

from aliasfuzz.campaign import _judge
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.verdict import Verdict

__all__ = ["assert_judged_valid_and_no_finding"]


def assert_judged_valid_and_no_finding(program: Program, pipeline: str = "aot_eager") -> dict:
    """Judge ``program`` on ``pipeline`` (CPU) as a campaign's worker does and fail the test
    when the verdict is a finding or ``invalid-program`` (the generator drew a program
    without one eager meaning); the message holds the explanation, the diff and the program's
    JSON. Returns the judge's result dict."""
    out = _judge.evaluate(program, pipeline, "cpu")
    assert not Verdict(out["verdict"]).is_finding, (
        f"{out['verdict']} (check {out['check']}): {out['explanation']}\n{out['diff']}\n"
        f"{program.dumps()}"
    )
    assert out["verdict"] != Verdict.INVALID_PROGRAM.value, out["explanation"]
    return out
