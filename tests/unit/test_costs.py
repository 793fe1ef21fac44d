"""Stage costs (issue 16): fuzz/costs.py counts each second once; campaign/costs.py tables them."""

from __future__ import annotations

import time

import pytest

from aliasfuzz.campaign.costs import format_table, table
from aliasfuzz.fuzz import costs


class _Clock:
    def __init__(self):
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(costs, "time", c)
    costs.take()
    yield c
    costs.take()


def test_nested_stages_count_each_second_once(clock):
    with costs.stage("outer"):
        clock.now += 1.0
        with costs.stage("inner"):
            clock.now += 2.0
            with costs.stage("outer"):  # the same name nested again still counts once
                clock.now += 0.5
        clock.now += 4.0
    assert costs.take() == {"outer": 5.5, "inner": 2.0}
    assert costs.take() == {}


def test_carve_moves_seconds_to_a_finer_stage_and_take_counts_open_stages(clock):
    with costs.stage("pipeline"):
        clock.now += 3.0
        costs.carve("inductor.compile", 2.0)
        clock.now += 1.0
        assert costs.current() == "pipeline"
        assert costs.take() == {"pipeline": 2.0, "inductor.compile": 2.0}
        clock.now += 1.0
    assert costs.take() == {"pipeline": 1.0}
    with pytest.raises(RuntimeError):
        costs.carve("x", 1.0)


def test_table_orders_stages_and_shares_add_up():
    rows = table({"oracle.checks": 1.0, "inductor.run": 2.0, "generate": 0.5,
                  "inductor.trace": 1.5, "aot_eager.trace": 1.0}, wall=5.0, workers=2,
                 programs=4)
    names = [r["stage"] for r in rows]
    assert names == ["generate", "aot_eager.trace", "inductor.trace", "inductor.run",
                     "oracle.checks", "unaccounted", "total"]
    assert rows[-2]["seconds"] == 4.0 and rows[-1]["seconds"] == 10.0
    assert abs(sum(r["share"] for r in rows[:-1]) - 1.0) < 1e-9
    assert rows[0]["ms_per_program"] == 125.0
    assert "inductor.trace" in format_table(rows)
    with pytest.raises(ValueError):
        table({}, wall=1.0, workers=0)


def test_judge_partitions_its_time_into_stages():
    """Every second of a judged run lands in exactly one stage, the pipeline's clock split
    into trace / compile / run."""
    from aliasfuzz.fuzz.sample import generate_one
    from aliasfuzz.oracle.judge import judge

    program = generate_one(0, 1)
    costs.take()
    t0 = time.perf_counter()
    j = judge(program, "aot_eager")
    wall = time.perf_counter() - t0
    got = costs.take()
    assert j.verdict is not None
    assert {"eager", "aot_eager.trace", "oracle.checks", "render"} <= set(got)
    assert 0.95 * wall <= sum(got.values()) <= wall
