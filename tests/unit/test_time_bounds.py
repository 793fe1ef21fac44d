"""``--time``'s bounds on a (resumed) campaign: :func:`aliasfuzz.campaign.driver.time_bounds`."""

from __future__ import annotations

import pytest

from aliasfuzz.campaign.driver import tail_seconds, time_bounds


@pytest.mark.parametrize("budget", [20.0, 150.0, 600.0, 3600.0])
@pytest.mark.parametrize("spent_share", [0.0, 0.5, 0.99, 1.0, 1.07, 1.2, 2.0])
def test_a_resume_gets_only_what_is_left_of_the_budget_and_its_tail(budget, spent_share):
    # fresh user 21: killed 11 s into the tail of a 150 s budget, the resume got a whole
    # new 30 s tail: 192 s in all, over the documented budget + max(10 %, 30 s) = 180 s
    t0, before = 1000.0, spent_share * budget
    deadline, tail_until = time_bounds(t0, budget, before)
    bound = budget + tail_seconds(budget)
    assert before + (deadline - t0) == pytest.approx(max(before, budget))
    assert before + (tail_until - t0) == pytest.approx(max(before, bound))
    assert t0 <= deadline <= tail_until


def test_the_fresh_users_kill_in_the_tail():
    deadline, tail_until = time_bounds(0.0, 150.0, 161.1)
    assert deadline == 0.0 and tail_until == pytest.approx(18.9)  # 161.1 + 18.9 = 180
