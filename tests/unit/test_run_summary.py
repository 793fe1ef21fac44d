"""The console summary of ``aliasfuzz run`` (fresh user 23): a short headline with the
programs and how many were mutants, one line per pipeline with every verdict count, and
one ``note:`` line per case of dismissed fast-path finding, counted from the dismissal
reasons :func:`aliasfuzz.campaign.driver.fast_path_only` really gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from aliasfuzz.campaign.cli import dismissed_notes, finding_lines, summary_lines
from aliasfuzz.campaign.driver import CampaignResult, _Campaign, dismissal
from aliasfuzz.campaign.options import CampaignOptions

CRASH = {"verdict": "crash", "check": "exceptions"}
HIDDEN = {"stage": "post-grad:reinplace_inplaceable_ops", "full": "hidden",
          "full_outcome": {"verdict": "ok"}}
UNSUPPORTED = {**HIDDEN, "stage": "scheduler", "full": "unsupported",
               "full_outcome": {"verdict": "unsupported", "explanation": "needs a GPU"}}


def _result(**kw) -> CampaignResult:
    return CampaignResult("c1", Path("/runs/c1"), CampaignOptions(programs=1, workers=1), **kw)


def _dismiss(res: CampaignResult, out: dict, blame: dict) -> None:
    """Count ``out`` on the fast path as the campaign does when it dismisses it."""
    kind, why = dismissal(out, "inductor-reinplace", blame)
    assert kind == "harness-only", why
    _Campaign._note_dismissed(SimpleNamespace(res=res), why)


def test_the_headline_is_short_and_every_count_is_on_its_pipelines_line():
    verdicts = Counter({("aot_eager", "ok"): 40, ("aot_eager", "crash"): 2,
                        ("torchscript", "unsupported"): 17, ("torchscript", "ok"): 25,
                        ("inductor-reinplace", "miscompile"): 1,
                        ("inductor-reinplace", "ok"): 41})
    res = _result(programs=42, mutants=1, tasks=126, seconds=60.0, verdicts=verdicts)
    head, *rows = summary_lines(res)
    assert head == ("campaign c1 (running): 42 programs (1 mutant), 126 runs in 60.0 s "
                    "(0.70 programs/s); verdicts per pipeline:")
    assert [r.split(":")[0].strip() for r in rows] == [
        "aot_eager", "inductor-reinplace", "torchscript"]
    back = Counter()
    for r in rows:
        pipeline, counts = r.split(": ", 1)
        assert len(r) < 100 and r.startswith("  ")
        for item in counts.split(", "):
            verdict, n = item.strip().rsplit(" ", 1)
            back[(pipeline.strip(), verdict)] += int(n)
    assert back == verdicts  # every number, none twice
    assert rows[0].endswith("ok 40, crash 2")  # most frequent first
    one = summary_lines(_result(programs=1, mutants=0, tasks=1, seconds=1.0,
                                verdicts=Counter({("eager", "ok"): 1})))
    assert one[0].startswith("campaign c1 (running): 1 program (0 mutants), 1 run in ")


def test_each_case_of_a_dismissed_fast_path_finding_has_its_own_note():
    res = _result()
    assert dismissed_notes(res) == []
    _dismiss(res, CRASH, HIDDEN)
    _dismiss(res, CRASH, UNSUPPORTED)
    _dismiss(res, CRASH, UNSUPPORTED)
    _dismiss(res, {"verdict": "miscompile", "check": "values"}, UNSUPPORTED)
    assert res.harness_only == 4
    assert res.fast_path == Counter({("hidden", "crash"): 1, ("unsupported", "crash"): 2,
                                     ("unsupported", "miscompile"): 1})
    hidden, unrun = dismissed_notes(res)
    assert hidden.startswith("note: 1 fast-path crash that full torch.compile does not show "
                             "(harness only, not a finding; "), hidden
    assert unrun.startswith("note: 2 fast-path crashes, 1 fast-path miscompile that full "
                            "torch.compile cannot run on this host (unconfirmed, not "
                            "findings; "), unrun
    assert all('see "dismissed" in /runs/c1/journal.jsonl)' in x for x in (hidden, unrun))
    # a flaky dismissal is not a fast-path one
    _Campaign._note_dismissed(SimpleNamespace(res=res), "crash/exceptions not reproduced")
    assert res.harness_only == 4


def test_a_finding_of_two_root_causes_prints_a_line_per_entry():
    # fresh user 24: "root causes: 6" above 5 finding lines; the blame of one finding had
    # filed two entries (functionalization departs, then reinplace), the second unnamed
    f = {"id": "miscompile-functionalization-cbd3794b15",
         "ids": ["miscompile-functionalization-cbd3794b15", "miscompile-reinplace-c8852360b4"],
         "verdict": "miscompile", "pipeline": "inductor", "check": "values",
         "stages": ["functionalization", "reinplace"], "new": True}
    lines = finding_lines(f)
    assert [x.split()[1] for x in lines] == f["ids"]
    assert all(" stage=functionalization,reinplace " in x for x in lines), lines
    assert lines[1].endswith("(new, same program as miscompile-functionalization-cbd3794b15)")
    assert "same program" not in lines[0]
    one = finding_lines({**f, "ids": None, "stages": [], "new": False, "known": "pytorch/pytorch#1"})
    assert one == ["finding miscompile-functionalization-cbd3794b15 miscompile inductor "
                   "check=values stage=unblamed:inductor (in corpus, known pytorch/pytorch#1)"]


def test_an_entry_filed_beside_one_already_shown_still_gets_its_line():
    # fresh user 26: a program blamed on functionalization then reinplace filed cbd3794b15
    # (shown before, for another program) and c8852360b4, which no line or count named
    from types import SimpleNamespace

    from aliasfuzz.campaign.driver import _Campaign

    camp = SimpleNamespace(res=SimpleNamespace(findings=[]))
    first = {"id": "cbd", "ids": ["cbd"], "pipeline": "aot_eager", "verdict": "miscompile",
             "check": "values", "new": False, "stages": ["functionalization"]}
    both = {**first, "ids": ["cbd", "c88"], "pipeline": "inductor-reinplace", "new": True,
            "stages": ["functionalization", "reinplace"]}
    for e in (first, both, both):
        _Campaign._add_finding(camp, e)
    assert [(f["id"], f["ids"]) for f in camp.res.findings] == [("cbd", ["cbd"]), ("c88", ["c88"])]
    lines = [line for f in camp.res.findings for line in finding_lines({**f, "known": None})]
    assert [line.split()[1] for line in lines] == ["cbd", "c88"]
