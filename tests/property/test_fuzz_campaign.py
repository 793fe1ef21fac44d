"""The campaign's property as pytest tests: no generated program is a finding on any
default pipeline. Run with ``pytest -n auto -m fuzz`` (excluded from the default run).

All xdist workers (and all runs on this checkout) share one Hypothesis example database,
``.hypothesis/examples`` at the repository root, so a failure one worker finds is replayed
first by every worker and every later run. ``ALIASFUZZ_REDIS_URL=redis://host:6379/0``
switches to Hypothesis's ``RedisExampleDatabase`` (needs the ``redis`` package), shared by
every machine that points at it. Findings here are shrunk by Hypothesis itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign.options import DEFAULT_PIPELINES
from aliasfuzz.fuzz.strategies import programs
from aliasfuzz.oracle.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]


def example_database():
    """The shared example database (a directory, or Redis when ALIASFUZZ_REDIS_URL is set)."""
    url = os.environ.get("ALIASFUZZ_REDIS_URL")
    if url:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase

        return RedisExampleDatabase(redis.Redis.from_url(url))
    return DirectoryBasedExampleDatabase(ROOT / ".hypothesis" / "examples")


@pytest.mark.fuzz
@pytest.mark.parametrize("pipeline", DEFAULT_PIPELINES)
@settings(
    database=example_database(),
    max_examples=int(os.environ.get("ALIASFUZZ_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=programs(max_statements=6))
def test_no_program_is_a_finding(pipeline, program):
    out = _judge.evaluate(program, pipeline, "cpu")
    assert not Verdict(out["verdict"]).is_finding, (
        f"{out['verdict']} on {pipeline} (check {out['check']}): {out['explanation']}\n"
        f"{out['diff']}\n{program.dumps()}"
    )
