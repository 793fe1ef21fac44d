"""Shrink once per program failure (issue 16, :mod:`aliasfuzz.campaign.follow`): a fixed-seed,
fixed-count campaign files the same root causes with and without it, and spends fewer
shrink executions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.follow import accepts, follow_key
from aliasfuzz.campaign.options import CampaignOptions

#: Program 1 of seed 28 is miscompiled the same way (input x1's values) on aot_eager and
#: inductor-reinplace (torch 2.13), program 0 on neither: one leader, one follower. (Seed 2's
#: program 3, then seed 11's program 2, were the example until new generator families
#: changed what the generator draws: the metadata-mutating family's slot, 23e3dc5.)
PIPELINES = ("inductor-reinplace", "aot_eager", "fx-reinplace")


def _campaign(tmp_path: Path, once: bool):
    opts = CampaignOptions(
        # mutate=0: the example is program 1 of the generator's seed 28 (above), not a mutant
        programs=3, seed=28, workers=2, pipelines=PIPELINES, shrink_once=once, mutate=0.0,
        corpus=str(tmp_path / f"corpus-{once}"), state=str(tmp_path / f"state-{once}"),
        report="none",
    )
    res = run_campaign(opts, show=False)
    events = [json.loads(x) for x in (res.dir / "journal.jsonl").read_text().splitlines()]
    return res, [e for e in events if e["t"] == "finding"]


def _roots(findings) -> set[str]:
    return {r for e in findings for r in (e.get("ids") or [])}


def test_fixed_seed_campaign_files_the_same_root_causes_shrinking_once(tmp_path):
    every, every_f = _campaign(tmp_path, once=False)
    once, once_f = _campaign(tmp_path, once=True)
    assert every.status == once.status == "done"
    assert once.verdicts == every.verdicts
    assert _roots(every_f) and _roots(once_f) == _roots(every_f)
    # following happened, only with shrink_once, and took fewer shrink executions
    followed = [e for e in once_f if e.get("follows")]
    assert followed and not any(e.get("follows") for e in every_f)
    executions = {name: sum(e.get("shrink_executions", 0) for e in f)
                  for name, f in (("every", every_f), ("once", once_f))}
    assert 0 < executions["once"] < executions["every"]


@pytest.mark.parametrize(
    ("out", "key"),
    [
        ({"verdict": "miscompile", "check": "inputs", "explanation": "x1 differs\nmore"},
         (3, "miscompile", "values", "x1 differs")),
        ({"verdict": "crash", "check": "signal:SIGSEGV", "explanation": "died"}, None),
        ({"verdict": "timeout", "check": "timeout", "explanation": "no answer"}, None),
        ({"verdict": "crash", "check": "exit:1", "explanation": "died"}, None),
        ({"verdict": "miscompile", "check": "values", "explanation": ""}, None),
    ],
)
def test_follow_key_is_the_program_failure_and_never_a_death(out, key):
    assert follow_key(3, out) == key


def test_a_follower_keeps_the_leaders_program_only_for_the_same_failure_and_stages():
    own = {"verdict": "miscompile", "check": "inputs"}
    there = {"verdict": "miscompile", "check": "values"}
    blame = {"stages": ["functionalization"]}
    assert accepts(own, there, ["functionalization"], blame)
    assert not accepts(own, there, ["decomposition"], blame)
    assert not accepts(own, {"verdict": "crash", "check": "exceptions"},
                       ["functionalization"], blame)
    assert not accepts(own, there, [], {"stages": []})  # unblamed: pipeline-specific root


def test_workers_share_one_kernel_cache_under_state_unless_asked_not_to(tmp_path):
    from aliasfuzz.campaign.pool import kernel_cache_dir

    shared = CampaignOptions(programs=1, state=str(tmp_path / "s"))
    assert kernel_cache_dir(shared) == (tmp_path / "s" / "kernel-cache").resolve()
    assert kernel_cache_dir(shared).is_dir()
    assert kernel_cache_dir(CampaignOptions(programs=1, kernel_cache="worker")) is None
    from aliasfuzz.campaign.pool import Pool

    pool = Pool(shared, tmp_path / "workers")
    try:
        assert {w.env["TORCHINDUCTOR_CACHE_DIR"] for w in pool.workers} == {
            str(kernel_cache_dir(shared))}
    finally:
        pool.close()


def _lead(waiting):
    from types import SimpleNamespace

    from aliasfuzz.campaign.driver import _Campaign

    key = (0, "miscompile", "values", "out0 differs")
    c = SimpleNamespace(leads={key: {"pipeline": "aot_eager", "small": None,
                                     "waiting": list(waiting)}},
                        leading={(0, "aot_eager"): key})
    c._submit_follow = lambda *a: _Campaign._submit_follow(c, *a)
    jobs: list[tuple] = []
    pool = SimpleNamespace(submit=lambda priority, job: jobs.append(job))
    return _Campaign, c, pool, jobs, key


def test_followers_try_the_leaders_shrunk_program_unless_it_came_back_unshrunk():
    from aliasfuzz.fuzz.sample import generate_one

    original, small = generate_one(0, 0), generate_one(0, 1)
    out = {"verdict": "miscompile", "check": "values", "explanation": "out0 differs"}
    blame = {"stages": ["functionalization"]}
    campaign, c, pool, jobs, key = _lead([("inductor", original, out)])
    assert campaign._lead_done(c, pool, 0, "aot_eager", original, small, blame) == 0
    assert [(j[0], j[2]) for j in jobs] == [("follow", "inductor")]
    assert jobs[0][4]["small"] is small and jobs[0][4]["stages"] == ["functionalization"]
    campaign, c, pool, jobs, key = _lead([("inductor", original, out)])
    campaign._lead_done(c, pool, 0, "aot_eager", original, original, blame)  # unshrunk
    assert [(j[0], j[2]) for j in jobs] == [("shrink", "inductor")]
    assert c.leads[key]["small"] is False
