"""The console summary of ``aliasfuzz run`` (fresh user 23): a short headline with the
programs and how many were mutants, one line per pipeline with every verdict count, and
one ``note:`` line per case of dismissed fast-path finding, counted from the dismissals
:func:`aliasfuzz.campaign.driver.dismissal` really gives (their cause, not their words)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from aliasfuzz.campaign.cli import dismissed_notes, finding_lines, summary_lines
from aliasfuzz.campaign.driver import CampaignResult, Dismissal, _Campaign, dismissal
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.oracle.blame import NOT_REPRODUCED

CRASH = {"verdict": "crash", "check": "exceptions"}
HIDDEN = {"stage": "post-grad:reinplace_inplaceable_ops", "full": "hidden",
          "full_outcome": {"verdict": "ok"}}
UNSUPPORTED = {**HIDDEN, "stage": "scheduler", "full": "unsupported",
               "full_outcome": {"verdict": "unsupported", "explanation": "needs a GPU"}}


def _result(**kw) -> CampaignResult:
    return CampaignResult("c1", Path("/runs/c1"), CampaignOptions(programs=1, workers=1), **kw)


def _dismiss(res: CampaignResult, out: dict, blame: dict) -> None:
    """Count ``out`` on the fast path as the campaign does when it dismisses it."""
    d = dismissal(out, "inductor-reinplace", blame)
    assert d.kind == "harness-only", d
    _Campaign._count_dismissed(SimpleNamespace(res=res), d)


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
    assert all('the report\'s "Findings not written", or "dismissed" in /runs/c1/journal.jsonl)' in x
               for x in (hidden, unrun))
    # a flaky dismissal is not a fast-path one
    _Campaign._count_dismissed(SimpleNamespace(res=res), Dismissal(
        "flaky", "replay", "crash/exceptions not reproduced when replayed", "crash"))
    assert (res.harness_only, res.unreproduced) == (4, 1)


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

    camp = SimpleNamespace(res=SimpleNamespace(findings=[]), known={"cbd"})
    first = {"id": "cbd", "ids": ["cbd"], "pipeline": "aot_eager", "verdict": "miscompile",
             "check": "values", "new": False, "stages": ["functionalization"]}
    both = {**first, "ids": ["cbd", "c88"], "pipeline": "inductor-reinplace", "new": True,
            "stages": ["functionalization", "reinplace"]}
    for e in (first, both, both):
        _Campaign._add_finding(camp, e)
    assert [(f["id"], f["ids"]) for f in camp.res.findings] == [("cbd", ["cbd"]), ("c88", ["c88"])]
    lines = [line for f in camp.res.findings for line in finding_lines(f)]
    assert [line.split()[1] for line in lines] == ["cbd", "c88"]
    # fresh user 33's B5: c88's line named both stages and not the program's other entry
    assert " stage=reinplace " in lines[1] and lines[1].endswith("(new, same program as cbd)"), lines
    # both entries new: each line its own stage, the second after the first
    camp = SimpleNamespace(res=SimpleNamespace(findings=[]), known=set())
    _Campaign._add_finding(camp, both)
    first_line, second_line = finding_lines(camp.res.findings[0])
    assert " stage=functionalization " in first_line and "same program" not in first_line
    assert " stage=reinplace " in second_line and second_line.endswith("same program as cbd)")


def test_each_line_of_a_finding_says_its_own_entrys_status():
    # a fresh user: c8852360b4 was shown "(new, known #196657, same program as ...)" while
    # its meta.json says "known": null; the known bug was its sibling entry's
    f = {"id": "cbd", "ids": ["cbd", "c88"], "verdict": "miscompile", "pipeline": "inductor",
         "check": "values", "stages": ["functionalization", "reinplace"], "new": True,
         "news": [False, True], "knowns": ["pytorch/pytorch#196657", None]}
    first, second = finding_lines(f)
    assert first.endswith("(in corpus, known pytorch/pytorch#196657)"), first
    assert second.endswith("(new, same program as cbd)"), second
    swapped = finding_lines({**f, "news": [True, True], "knowns": [None, "pytorch/pytorch#196657"]})
    assert swapped[0].endswith("(new)") and "known" not in swapped[0], swapped
    assert swapped[1].endswith("(new corpus entry, known pytorch/pytorch#196657, same program as cbd)")


def test_a_journal_of_old_says_no_entry_of_several_is_the_known_bug():
    # an event journaled before news and knowns (a campaign resumed after the upgrade): its
    # one known was the first known root of all; which entry's is not written
    old = {"t": "finding", "i": 3, "id": "cbd", "ids": ["cbd", "c88"], "pipeline": "inductor",
           "verdict": "miscompile", "check": "values", "stages": ["functionalization",
           "reinplace"], "new": True, "known": "pytorch/pytorch#196657"}
    assert all("known" not in line for line in finding_lines(old))
    # with the corpus at the start, as the driver replays it: new is each entry's own
    camp = SimpleNamespace(res=_result(), known={"c88"})
    _Campaign._add_finding(camp, old)
    (f,) = camp.res.findings
    assert (f["news"], f["knowns"], f["new"]) == ([True, False], [None, None], True)
    assert [line.rsplit("(", 1)[1] for line in finding_lines(f)] == [
        "new)", "in corpus, same program as cbd)"]
    # one entry: the event's known is that entry's
    from aliasfuzz.campaign.journal import finding_entries

    one = {**old, "ids": ["cbd"]}
    assert finding_entries(one) == [("cbd", True, "pytorch/pytorch#196657")]
    assert finding_lines(one)[0].endswith("(new corpus entry, known pytorch/pytorch#196657)")


def _writer(tmp_path: Path, known: set[str], bugs: list) -> SimpleNamespace:
    """Enough of a campaign for :meth:`_Campaign._write` to record a finding for real."""
    camp = SimpleNamespace(
        opts=SimpleNamespace(corpus=str(tmp_path), seed=0, device="cpu", pipeline_options={}),
        res=_result(), bugs=bugs, known=known, events=[])
    camp._log = camp.events.append
    camp._add_finding = lambda e: _Campaign._add_finding(camp, e)
    camp._prekey = lambda *a: _Campaign._prekey(camp, *a)
    return camp


def test_a_finding_of_two_roots_journals_each_entrys_status_and_fails_by_it(tmp_path):
    # blamed on functionalization (no known bug) then decomposition (#196657's stage): the
    # event said "known" of both, and the new unknown root did not make run exit 1
    from aliasfuzz.campaign.journal import Journal
    from tests.unit.test_corpus_store import _program
    from tests.unit.test_known import ADD_BUG, TWO_STAGES

    out = {"verdict": "miscompile", "check": "values", "explanation": "x differs"}
    camp = _writer(tmp_path, set(), [ADD_BUG])
    _Campaign._write(camp, 0, "aot_eager", _program(), _program(), out, 3, TWO_STAGES)
    (event,) = camp.events
    ids = event["ids"]
    first, second = finding_lines(camp.res.findings[0])
    assert first.endswith("(new)"), first
    assert second.endswith(f"(new corpus entry, known {ADD_BUG.issue}, same program as {ids[0]})"), second
    assert camp.res.failing == camp.res.findings  # the functionalization root: new, unknown
    assert (event["news"], event["knowns"], event["new"]) == ([True, True],
                                                             [None, ADD_BUG.issue], True)
    assert "known" not in event  # one known for several entries is what misled
    # the journal keeps the lists (a resume reads them back as written)
    j = Journal(tmp_path / "journal.jsonl")
    j.append(dict(event))
    j.close()
    (back,) = Journal.events(tmp_path / "journal.jsonl")
    assert (back["ids"], back["news"], back["knowns"]) == (ids, [True, True], [None, ADD_BUG.issue])
    # again, with the functionalization entry in the corpus at the start: only the known
    # root is new, and a new known root does not fail the run
    again = _writer(tmp_path, {ids[0]}, [ADD_BUG])
    _Campaign._write(again, 1, "aot_eager", _program(), _program(), out, 3, TWO_STAGES)
    assert again.events[0]["news"] == [False, True]
    first, second = finding_lines(again.res.findings[0])
    assert first.endswith("(in corpus)") and second.endswith(
        f"(new corpus entry, known {ADD_BUG.issue}, same program as {ids[0]})"), (first, second)
    assert again.res.failing == []


WRONG = {"verdict": "miscompile", "check": "values", "explanation": "out0: values differ"}


def _replayer() -> SimpleNamespace:
    """Enough of a campaign for :meth:`_Campaign._replay` to count journaled dismissals."""
    camp = SimpleNamespace(res=_result(), known=set(), pending={}, done=set(), prekeys=set(),
                           mutant_ids=set(), gpu_runs=[], elapsed_before=0.0,
                           start={"started": 0.0})
    camp._add_finding = lambda e: _Campaign._add_finding(camp, e)
    camp._count_dismissed = lambda d: _Campaign._count_dismissed(camp, d)
    return camp


def test_a_dismissed_finding_is_counted_on_its_own_line_also_when_replayed_on_resume():
    # fresh user 28: a SIGSEGV that recurred in a fresh worker, then no cut reproduced it, was
    # dismissed before a kill -9; the resumed summary said crash 1 and nothing else (the
    # replay counted only fast-path dismissals), and "did not recur" would have been false
    camp = _replayer()
    events = [
        {"t": "finding", "i": 10, "pipeline": "inductor-reinplace", "id": None,
         "dismissed": "worker died (signal:SIGSEGV) and no cut reproduces it",
         "dismissed_kind": "flaky"},
        # a journal of old: no kind; a fast-path reason says so, anything else is flaky
        {"t": "finding", "i": 11, "pipeline": "inductor", "id": None,
         "dismissed": "miscompile/values not reproduced when replayed: the replay gave ok/None"},
        {"t": "finding", "i": 12, "pipeline": "inductor-reinplace", "id": None,
         "dismissed": "fast-path-only crash: full torch.compile(backend='inductor') gives ok"},
    ]
    _Campaign._replay(camp, events)
    assert (camp.res.unreproduced, camp.res.flaky, camp.res.harness_only) == (2, 0, 1)
    assert camp.res.fast_path[("hidden", "crash")] == 1
    notes = dismissed_notes(camp.res)
    assert notes[0].startswith("note: 2 findings not written, not confirmed: the replay did "
                               "not show it again (1); another cause (1); each one's reason is in"), notes
    # one count per cause, each as dismissal words it
    camp.res.unreproduced, camp.res.unreproduced_by = 0, Counter()
    for d in (dismissal({"verdict": "crash", "check": "signal:SIGSEGV"}, "inductor",
                        {"stage": None, "reason": NOT_REPRODUCED}),
              dismissal(WRONG, "inductor", {"stage": None, "reason": NOT_REPRODUCED,
                                             "fresh": {"verdict": "ok", "check": None}}),
              dismissal(WRONG, "inductor", {"stage": None, "reason": NOT_REPRODUCED,
                                             "fresh": {"verdict": "ok", "check": None}})):
        camp._count_dismissed(d)
    # a replay that said nothing adds no empty "()" to the reason (campaign 34)
    replayed = {**WRONG, "unreproduced": {"verdict": "ok", "check": None, "explanation": ""}}
    assert dismissal(replayed, "inductor", {}).why.endswith("the replay gave ok/None")
    assert dismissed_notes(camp.res)[0].startswith(
        "note: 3 findings not written, not confirmed: neither a stage cut nor its pipeline in "
        "a fresh interpreter showed it (2); no stage cut reproduced the worker's death (1);"), (
        dismissed_notes(camp.res))
    assert len(notes) == 2 and "fast-path crash that full torch.compile does not show" in notes[1]


#: one finding per cause of dismissal, as the real rule gives it
EACH_CAUSE = [
    ({"verdict": "crash", "check": "signal:SIGSEGV"}, "inductor",
     {"stage": None, "reason": NOT_REPRODUCED}),
    (WRONG, "inductor", {"stage": None, "reason": NOT_REPRODUCED,
                         "fresh": {"verdict": "ok", "check": None}}),
    ({**WRONG, "unreproduced": {"verdict": "ok", "check": None}}, "inductor", {}),
    (CRASH, "inductor-reinplace", HIDDEN),
    ({"verdict": "timeout", "check": "seconds"}, "inductor-reinplace", UNSUPPORTED),
]


def _counts(res: CampaignResult) -> tuple:
    return res.unreproduced, res.unreproduced_by, res.harness_only, res.fast_path


def test_a_dismissal_is_counted_by_its_journaled_cause_not_its_words():
    live = SimpleNamespace(res=_result())
    events, old = [], []
    for out, pipeline, blame in EACH_CAUSE:
        d = dismissal(out, pipeline, blame)
        _Campaign._count_dismissed(live, d)
        event = {"t": "finding", "i": len(events), "pipeline": pipeline, "id": None,
                 **d.journal_fields()}
        events.append(event)
        # a journal of old: the reason alone, counted as the words then said
        old.append({k: v for k, v in event.items()
                    if k not in ("dismissed_cause", "dismissed_verdict")})
    assert [e["dismissed_cause"] for e in events] == [
        "death", "fresh", "replay", "fast-path-hidden", "fast-path-unsupported"]
    assert live.res.fast_path == Counter({("hidden", "crash"): 1, ("unsupported", "timeout"): 1})
    assert live.res.unreproduced_by == Counter({"death": 1, "fresh": 1, "replay": 1})
    for journal in (events, old):  # --resume counts both as the campaign did
        camp = _replayer()
        _Campaign._replay(camp, journal)
        assert _counts(camp.res) == _counts(live.res)
        assert dismissed_notes(camp.res) == dismissed_notes(live.res)
    # a reworded reason moves nothing: the counts read the cause and the verdict
    camp = _replayer()
    _Campaign._replay(camp, [{**e, "dismissed": "reworded"} for e in events])
    assert _counts(camp.res) == _counts(live.res)


def test_a_program_some_pipelines_judged_at_the_budgets_end_is_said_apart():
    # fresh user 28's B2: program 10 ran on 2 of 5 pipelines when the budget ran out; the
    # headline said 10 programs while two pipelines' counts added up to 11
    opts = CampaignOptions(programs=3, workers=1, pipelines=("aot_eager", "inductor", "torchscript"))
    res = _result()
    camp = SimpleNamespace(opts=opts, res=res, mutant_ids={1},
                           done={(0, "aot_eager"), (0, "inductor"), (0, "torchscript"),
                                 (1, "aot_eager"), (1, "inductor"), (1, "torchscript"),
                                 (2, "aot_eager"), (2, "inductor")})
    camp._fully_done = lambda i: _Campaign._fully_done(camp, i)
    _Campaign._count_programs(camp)
    assert (res.programs, res.mutants, res.partial) == (2, 1, 1)
    res.tasks, res.seconds = 8, 4.0
    assert summary_lines(res)[0] == (
        "campaign c1 (running): 2 programs (1 mutant), and 1 program judged by some pipelines "
        "only, 8 runs in 4.0 s (0.50 programs/s); verdicts per pipeline:")


def test_a_finding_not_shrunk_for_an_earlier_ones_key_is_journaled_counted_and_noted():
    # fresh user 30: such findings were in no count, no hit and no report section
    from aliasfuzz.fuzz.sample import generate_one

    logged, submitted = [], []
    res = _result()
    camp = SimpleNamespace(res=res, prekeys=set(), prekey_first={}, leads={}, leading={},
                           opts=SimpleNamespace(shrink_once=False, shrink=True),
                           _log=logged.append)
    camp._prekey = lambda *a: _Campaign._prekey(camp, *a)
    pool = SimpleNamespace(submit=lambda *a: submitted.append(a))
    p = generate_one(0, 3)
    out = {"verdict": "miscompile", "check": "values", "decision_kinds": []}
    assert _Campaign._finding(camp, pool, 3, "inductor", p, out) == 1 and len(submitted) == 1
    assert _Campaign._finding(camp, pool, 9, "inductor", p, out) == 0 and len(submitted) == 1
    assert logged == [{"t": "finding", "i": 9, "pipeline": "inductor", "id": None,
                       "duplicate": True, "like": [3, "inductor"]}]
    assert res.duplicates == 1
    # the same op kinds with other ops is shrunk: a root of its own may hide there (program 77)
    from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec

    def prog(fn: str) -> Program:
        return Program((StorageSpec("s0", 4),), (TensorSpec("x", "s0", (4,), (1,)),),
                       (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),
                        Op(fn, ("v0",), {}, ("v1",))), ("v1",))

    assert _Campaign._finding(camp, pool, 20, "inductor", prog("sin"), out) == 1
    assert _Campaign._finding(camp, pool, 21, "inductor", prog("tanh"), out) == 1
    assert _Campaign._finding(camp, pool, 22, "inductor", prog("sin"), out) == 0
    assert len(submitted) == 3 and res.duplicates == 2
    res.duplicates = 1
    (note,) = dismissed_notes(res)
    assert note.startswith("note: 1 finding not shrunk: its pipeline, verdict, check, decision "
                           "kinds, op kinds and ops are an earlier finding's")


def test_the_root_cause_headline_counts_the_entries_it_wrote():
    """Fresh user 38's B2: "0 new" above a finding line "(new, known ...)" and an untracked
    corpus folder. The headline's "new" stays new-and-not-known; the entries written are
    counted apart (statuses read from the committed corpus's entries)."""
    from aliasfuzz.campaign.cli import root_cause_line

    corpus = Path(__file__).resolve().parents[2] / "corpus"
    known, other, old = ("crash-aot-runtime-4c99eb0bc2", "crash-functionalization-f04922ab0c",
                         "miscompile-reinplace-e65ce44d27")
    base = {"verdict": "crash", "check": "exceptions", "pipeline": "inductor"}
    findings = [{**base, "id": i, "ids": [i], "news": [n], "knowns": [None]}
                for i, n in ((known, True), (old, False), (other, True))]
    line = root_cause_line(findings, corpus)
    assert line == ("root causes: 3 (1 new, 1 known upstream, 1 already in the corpus; "
                    "2 corpus entries written)"), line
    assert root_cause_line(findings[:2], corpus).endswith("; 1 corpus entry written)")


def test_a_deleted_known_entry_stays_known_upstream_in_the_headline(tmp_path):
    # fresh user 40's B6: an entry deleted before --resume was "(in corpus, known ...)" on
    # its finding line and "already in the corpus" in the headline; the report's row reads
    # the journal's known for an entry that is gone, and so does the headline
    from aliasfuzz.campaign.cli import root_cause_line

    gone = "miscompile-functionalization-c10211248b"
    f = {"verdict": "miscompile", "check": "values", "pipeline": "aot_eager", "id": gone,
         "ids": [gone], "news": [False], "knowns": ["pytorch/functorch#950"]}
    assert root_cause_line([f], tmp_path) == (
        "root causes: 1 (0 new, 1 known upstream, 0 already in the corpus; "
        "0 corpus entries written)")


def test_an_entry_written_unblamed_when_time_was_up_is_not_counted_new(tmp_path):
    # fresh user 40's B8: two unshrunk copies of a known crash, written unblamed when the
    # time budget ran out, were "2 new" root causes; they are still written, counted apart
    from aliasfuzz.campaign.cli import root_cause_line
    from aliasfuzz.campaign.history import History

    base = {"verdict": "crash", "check": "exceptions", "pipeline": "inductor", "news": [True],
            "knowns": [None], "new": True}
    spent = [{**base, "id": i, "ids": [i], "budget_spent": "not shrunk, not blamed"}
             for i in ("crash-unblamed-inductor-dc30c0897a", "crash-unblamed-inductor-485bae0a")]
    blamed = {**base, "id": "crash-lowering-0000000000", "ids": ["crash-lowering-0000000000"]}
    assert root_cause_line([*spent, blamed], tmp_path) == (
        "root causes: 3 (1 new, 0 known upstream, 0 already in the corpus, 2 left unblamed "
        "when the time budget was spent; 3 corpus entries written)")
    assert "unblamed" not in root_cause_line([blamed], tmp_path)
    # the Trends table's "new" is the headline's
    h = History(tmp_path / "h.sqlite")
    h.record({"id": "c", "started": 1.0, "finished": 2.0, "seed": 0, "device": "cpu",
              "pipelines": "inductor", "budget": "1 s", "programs": 1, "tasks": 1,
              "seconds": 1.0, "throughput": 1.0, "status": "done", "versions": {}},
             {}, [*spent, blamed])
    (row,) = h.campaigns()
    assert sorted(f["new"] for f in row["findings"]) == [0, 0, 1]


def test_entries_named_but_gone_from_the_corpus_are_listed(tmp_path):
    # fresh user 39's B9: an entry moved away before --resume was still printed as written,
    # with no warning on the console (the report marked its row)
    from aliasfuzz.campaign.cli import missing_entries

    (tmp_path / "here").mkdir()
    findings = [{"id": "here", "ids": ["here", "gone"]}, {"id": "gone"}, {"id": "also-gone"}]
    assert missing_entries(findings, tmp_path) == ["gone", "also-gone"]
    assert missing_entries(findings[:1], tmp_path / "here") == ["here", "gone"]
    # and its finding line says so (fresh user 41's B3: "(new)" for a deleted entry)
    from aliasfuzz.campaign.cli import finding_lines

    f = {"id": "gone", "ids": ["gone"], "news": [True], "knowns": [None], "verdict": "miscompile",
         "pipeline": "inductor", "check": "values", "stages": ["lowering"]}
    assert finding_lines(f, {"gone"})[0].endswith("(new, deleted since)")
    assert finding_lines(f)[0].endswith("(new)")
