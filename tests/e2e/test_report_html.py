"""The campaign report: summary.json content, a self-contained page, and rendering in
headless Chromium (skipped when ``chromium`` is not installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign.history import History
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.report import latest_campaign, write_report

#: (stage, known upstream, already in the corpus, pipelines that hit it)
ROOTS = [
    ("scheduler", None, True, ("inductor",)),
    ("joint:remove_noop_ops", None, False, ("inductor", "inductor-reinplace")),
    ("decomposition", {"issue": "pytorch/pytorch#195422", "title": "dropout", "related": False},
     False, ("aot_eager",)),
]


def _root_cause_events(corpus, p) -> list[dict]:
    """Three root causes of one program: one already in the corpus, one new, one a known
    upstream bug; their corpus entries (meta v2) and their ``finding`` events."""
    events = []
    for stage, known, _, pipelines in ROOTS:
        out = {"verdict": "miscompile", "check": "values"}
        trail = [["dynamo", "agrees"], [stage, "departs (values: out0: values differ)"]]
        path, _ = store.write_entry(corpus, p, {
            "root": {"stage": stage, "evidence": ["inplace"], **out},
            "stages": [stage], "trail": trail, "full": "reproduces", "known": known,
            "related": [{"issue": "pytorch/pytorch#1", "title": "kin", "related": True}],
            "ops": ["add_.Scalar"], "signature": store.signature(p, out, pipelines[0]),
            "expected": {"pipeline": pipelines[0], **out},
            "explanation": "out0: values differ at [0]: 1.0 in eager, 2.0 compiled",
            "diff": "eager: 1.0\ncompiled: 2.0 <b>", "versions": store.versions(),
            "statements": {"original": 5, "minimized": 1}, "device": "cpu",
            "hits": [{"pipeline": pl, "program": p.to_json(), "verdict": "miscompile",
                      "check": "values", "full": None} for pl in pipelines],
        })
        for pl in pipelines:
            events.append({"t": "finding", "i": 2, "pipeline": pl, "id": path.name,
                           "ids": [path.name], "new": True, "known": known and known["issue"],
                           "stage": stage, "stages": [stage], "full": None, **out,
                           # written as found: the time budget was spent (fresh user 39's B5)
                           **({"budget_spent": "not shrunk, not blamed"}
                              if stage == "decomposition" else {})})
    return events


def _campaign(tmp_path, cid: str, started: float, with_finding: bool) -> None:
    state, corpus = tmp_path / "state", tmp_path / "corpus"
    d = state / "runs" / cid
    d.mkdir(parents=True)
    opts = CampaignOptions(
        programs=3, pipelines=("inductor", "aot_eager"), corpus=str(corpus), state=str(state)
    )
    (d / "options.json").write_text(json.dumps(opts.to_json()))
    p = Program(
        (StorageSpec("s0", 16),),
        (TensorSpec("x", "s0", (4, 4), (4, 1)),),
        (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),),
        ("v0",),
    )
    known = []
    if with_finding:  # the scheduler root cause was in the corpus before this campaign
        known = [e["id"] for e in _root_cause_events(tmp_path / "before", p)][:1]
    (d / "start.json").write_text(
        json.dumps({"id": cid, "started": started, "known": known, "versions": store.versions()})
    )
    dec = [
        {"kind": "auto_functionalized_v2", "reinplaced": True, "truth": "unsafe"},
        {"kind": "auto_functionalized_v2", "reinplaced": False, "truth": "safe"},
    ]
    events = []
    for i in range(3):
        for pl in opts.pipelines:
            bad = with_finding and i == 2 and pl == "inductor"
            rejected = i == 1 and pl == "aot_eager"
            # program 1 a mutant of a seed (--mutate), program 0 of an entry, except in c1
            mutant = {1: {"mutated_from": "seeds/b15"},
                      0: {"mutated_from": "miscompile-x"} if with_finding else {}}.get(i, {})
            events.append(
                {
                    **mutant,
                    "t": "task",
                    "i": i,
                    "pipeline": pl,
                    "op_kinds": ["inplace", "view"],
                    "h": "h",
                    "statements": 1,
                    "outcome": {
                        "verdict": "miscompile" if bad else "unsupported" if rejected else "ok",
                        "check": "unsupported" if rejected else None,
                        "explanation": "torchscript-unscriptable-op: the program uses an op "
                        "TorchScript does not support (statement 3: tk.scale_ (triton) is not "
                        "scriptable)"
                        if rejected
                        else "",
                        "seconds": 0.1 * (i + 1),
                        "decisions": dec,
                    },
                }
            )
    findings = []
    if with_finding:
        for e in _root_cause_events(corpus, p):
            events.append(e)
            findings.append({k: e[k] for k in ("id", "pipeline", "verdict", "check", "new")})
        events.append({"t": "finding", "i": 1, "pipeline": "inductor", "id": None,
                       "duplicate": True, "like": [2, "inductor"]})
        # a finding the campaign did not write, and one of a journal written before kinds
        events.append({"t": "finding", "i": 0, "pipeline": "inductor", "id": None,
                       "dismissed": "fast-path-only crash: full torch.compile does not show it",
                       "dismissed_kind": "harness-only"})
        events.append({"t": "finding", "i": 2, "pipeline": "aot_eager", "id": None,
                       "dismissed": "crash/signal:SIGSEGV not reproduced"})
    events.append({"t": "end", "status": "done"})
    (d / "journal.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    History(state / "history.sqlite").record(
        {
            "id": cid,
            "started": started,
            "finished": started + 9,
            "seed": 0,
            "device": "cpu",
            "pipelines": "inductor,aot_eager",
            "budget": "3 programs",
            "programs": 3,
            "tasks": 6,
            "seconds": 9.0,
            "throughput": 1 / 3,
            "status": "done",
            "versions": {},
        },
        {("inductor", "ok"): 2},
        findings,
    )


@pytest.fixture
def report(tmp_path):
    _campaign(tmp_path, "c1", time.time() - 100, with_finding=False)
    _campaign(tmp_path, "c2", time.time(), with_finding=True)
    assert latest_campaign(tmp_path / "state") == "c2"
    return write_report(
        "c2", state=tmp_path / "state", corpus=tmp_path / "corpus", out=tmp_path / "out"
    )


def test_summary_json_and_self_contained_html(report):
    s = json.loads((report.parent / "summary.json").read_text())
    assert s["verdicts"]["inductor"] == {"ok": 2, "miscompile": 1}
    assert s["confusion"]["inductor"]["unsafe"] == {"reinplaced": 3, "copied": 0}
    assert s["confusion"]["aot_eager"]["safe"] == {"reinplaced": 0, "copied": 3}
    assert s["coverage"]["programs_with_kind"] == {"inplace": 3, "view": 3}
    assert s["campaign"]["mutants"] == 2  # of its 3 programs, counted per source
    assert s["campaign"]["mutated_from"] == {"miscompile-x": 1, "seeds/b15": 1}
    assert s["campaign"]["partial"] == 0  # every program judged by both pipelines
    assert [h["id"] for h in s["history"]] == ["c1", "c2"]
    assert s["rejections"] == {}
    assert s["unsupported"] == {
        "aot_eager": {
            "torchscript-unscriptable-op: the program uses an op TorchScript does not support "
            "[tk.scale_]": 1
        }
    }
    assert len(s["findings"]) == 4 and all(f["ids"] == [f["id"]] for f in s["findings"])
    causes = s["root_causes"]
    assert [r["status"] for r in causes] == ["new", "known", "corpus"]  # new first
    assert [r["stage"] for r in causes] == ["joint:remove_noop_ops", "decomposition", "scheduler"]
    assert causes[0]["hits"] == {"inductor": 1, "inductor-reinplace": 1}
    assert causes[1]["known_bug"]["issue"] == "pytorch/pytorch#195422"
    assert causes[0]["trail"][1] == ["joint:remove_noop_ops", "departs (values: out0: values differ)"]
    assert "def f(x)" in causes[0]["repro"] and 0 < causes[0]["repro_lines"] <= 40
    # shrunk: the written findings less the known-first and budget-spent ones, as the HTML
    # says (fresh user 53's B4: summary.json counted all four as shrunk)
    assert s["counts"] == {"raw_findings": 1, "written_findings": 4, "shrunk_findings": 3,
                           "known_first": 0, "dismissed": 2,
                           "deduplicated": 1, "root_causes": 3, "new": 1, "unblamed": 0, "known": 1,
                           "corpus": 1, "written": 2, "budget_spent": 1}
    # a finding not shrunk for an earlier one's coarse key is listed, not lost (fresh user 30)
    assert s["deduplicated"] == [{"i": 1, "pipeline": "inductor", "like": [2, "inductor"]}]
    # what the console's note: lines say, the report says too (fresh user 28's B3)
    assert s["dismissed"] == [
        {"i": 0, "pipeline": "inductor", "kind": "harness-only",
         "why": "fast-path-only crash: full torch.compile does not show it"},
        {"i": 2, "pipeline": "aot_eager", "kind": "flaky", "why": "crash/signal:SIGSEGV not reproduced"}]
    # an issue draft for the new root cause only
    assert s["upstream_drafts"] == [f"upstream/{causes[0]['id']}.md"]
    draft = (report.parent / s["upstream_drafts"][0]).read_text()
    assert draft.startswith("# [inductor] joint-graph pass remove_noop_ops returns wrong values")
    for part in ("### 🐛 Describe the bug", "### Versions", "python -m torch.utils.collect_env",
                 "```python", "**← blamed**", 'torch.compile(backend="inductor") × 1, Inductor up to its post-grad passes × 1'):
        assert part in draft
    html = report.read_text()
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert html.count("data:image/png;base64,") == 3  # coverage, throughput, trends
    assert "&lt;b&gt;" in html  # the diff is escaped
    assert "known pytorch/pytorch#195422" in html and "related pytorch/pytorch#1" in html
    assert "inductor &times; 1, inductor-reinplace &times; 1" in html
    assert html.index("joint:remove_noop_ops") < html.index("decomposition") < html.index(">scheduler<")
    assert '<ol class="trail">' in html and "3</b>root causes: 1 new, 1 known upstream" in html
    # the known bug's entry is new to the corpus too (fresh user 38's B2)
    assert "1 already in the corpus; 2 corpus entries written</div>" in html
    assert "3</b>programs (2 mutants of corpus programs and seeds)" in html
    assert '<a href="#dismissed">2 not written</a>' in html
    assert '<a href="#deduplicated">1 not shrunk</a>' in html
    # fresh user 39's B5: a finding written when the time was up was counted "shrunk and blamed"
    assert ("3 shrunk and blamed, 1 written unblamed when the time budget was spent (their "
            "shrink cut short, skipped or done)"
            in html), html[html.find("raw findings"):][:400]
    assert "<td>1</td><td class=\"l\">inductor</td><td class=\"l\">program 2 on inductor</td>" in html
    assert "<td class=\"l\">harness-only</td><td class=\"l\">fast-path-only crash: full" in html
    sections = (
        "Summary",
        "Verdicts per pipeline",
        # what an engineer opens the report for comes right after the counts (the fourteenth
        # session's fresh user found it 2,700 px down, below refusals and rejections)
        "Root causes",
        "Findings not written",
        "Documented refusals",
        "Programs a pipeline rejected",
        "Decisions against ground truth",
        "Op-kind coverage",
        "Throughput",
        "Trends across campaigns",
    )
    at = [html.index(f">{section}</h2>") for section in sections]
    assert at == sorted(at), dict(zip(sections, at, strict=True))


def test_renders_in_headless_chromium(report, tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    flags = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1200,1600", report.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
    )
    dom = subprocess.run(
        [*flags, "--dump-dom", report.as_uri()],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "aliasfuzz campaign c2" in dom and 'id="cause-1"' in dom and 'id="root-causes"' in dom
    assert 'id="dismissed-findings"' in dom and "not reproduced" in dom
    import matplotlib.image

    img = matplotlib.image.imread(shot)
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    # not a blank page: many distinct colours, and dark text pixels on the light page
    flat = img[..., :3].reshape(-1, 3)
    assert len({tuple(px) for px in flat[::97].round(2).tolist()}) > 20
    assert (flat.mean(axis=1) < 0.3).mean() > 0.002


def test_unknown_runs_are_listed_by_reason():
    from aliasfuzz.report.data import undecided

    def task(pipeline, verdict, explanation):
        return {"pipeline": pipeline, "outcome": {"verdict": verdict, "explanation": explanation}}

    tasks = [
        task("inductor", "unknown", "triton_kernel_wrapper_functional_proxy_1 (s_ptr) undecided: 4 runs agree"),
        task("inductor", "unknown", "triton_kernel_wrapper_functional_proxy_7 (s_ptr) undecided: 2 runs agree"),
        task("inductor", "ok", ""),
        task("aot_eager", "unknown", "index_put_3 undecided"),
    ]
    assert undecided(tasks) == {
        "aot_eager": {"index_put_N undecided": 1},
        "inductor": {"triton_kernel_wrapper_functional_proxy_N (s_ptr) undecided: N runs agree": 2},
    }


def test_an_unblamed_root_cause_shows_why_no_stage_is_named(report, tmp_path):
    from aliasfuzz.oracle.blame import COST_NOT_CUT
    from aliasfuzz.report import render_html
    from aliasfuzz.report.data import _entry_fields

    p = Program((StorageSpec("s0", 4),), (TensorSpec("x", "s0", (4,), (1,)),),
                (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),), ())
    out = {"verdict": "missed-reinplace", "check": "witness"}
    corpus = tmp_path / "unblamed"
    path, _ = store.write_entry(corpus, p, {
        "root": {"stage": "unblamed:inductor", "evidence": ["inplace"], **out}, "stages": [],
        "trail": [], "blame_reason": COST_NOT_CUT, "signature": store.signature(p, out, "inductor"),
        "expected": {"pipeline": "inductor", **out}, "explanation": "witness graph-split: ...",
        "versions": store.versions(), "device": "cpu",
    })
    fields = _entry_fields(corpus, path.name)
    assert fields["blame_reason"] == COST_NOT_CUT and fields["stage"] == "unblamed:inductor"
    summary = json.loads((report.parent / "summary.json").read_text())
    row = dict(summary["root_causes"][0], id=path.name, **{**out, **fields})
    html = render_html(dict(summary, root_causes=[row]))
    assert "not cut stage by stage: " + COST_NOT_CUT.replace("'", "&#39;") in html


def test_a_deleted_entrys_row_keeps_the_stage_the_campaign_blamed(tmp_path):
    # fresh user 28's B5: the row of an entry deleted from the corpus said "unblamed"
    # although its finding event says ts-optimizer; the detail says the entry is unreadable
    from aliasfuzz.report.data import root_causes

    gone = "crash-ts-optimizer-2441fd8370"
    event = {"t": "finding", "i": 4, "pipeline": "torchscript", "id": gone, "ids": [gone],
             "news": [True], "knowns": [None], "new": True, "verdict": "crash",
             "check": "exceptions", "stage": "ts-optimizer", "stages": ["ts-optimizer"]}
    (row,) = root_causes(tmp_path, [event], set())
    assert "error" in row and (row["stage"], row["stages"]) == ("ts-optimizer", ["ts-optimizer"])


def test_a_program_judged_by_some_pipelines_only_is_counted_apart_and_shown(report):
    from aliasfuzz.report import render_html
    from aliasfuzz.report.data import _partial

    def task(i, pipeline):
        return {"t": "task", "i": i, "pipeline": pipeline}

    tasks = [task(0, "a"), task(0, "b"), task(1, "a")]  # program 1: the budget ran out
    assert _partial(tasks, ("a", "b")) == 1 and _partial(tasks[:2], ("a", "b")) == 0
    summary = json.loads((report.parent / "summary.json").read_text())
    summary["campaign"]["partial"] = 1
    assert "; 1 more judged by some pipelines only, in the verdict counts)" in render_html(summary)


def test_a_root_cause_row_names_this_campaigns_other_checks(report):
    # fresh user 38's B3: the row's check is the entry's own (the one its diff shows), and
    # this campaign's other checks are named beside it
    from aliasfuzz.report import render_html

    summary = json.loads((report.parent / "summary.json").read_text())
    row = dict(summary["root_causes"][0], verdict="miscompile", check="values",
               campaign_checks=["inputs"])
    html = render_html(dict(summary, root_causes=[row]))
    assert "miscompile / values (this campaign also inputs)</td>" in html
    assert "this campaign also" not in render_html(dict(summary, root_causes=[
        dict(row, campaign_checks=[])]))


def test_a_root_cause_shows_this_campaigns_sighting_of_another_verdict(report):
    # fresh user 45's B3: a torchscript miscompile merged into a crash entry was shown as
    # the crash alone, labelled "miscompile"
    from aliasfuzz.report import render_html

    summary = json.loads((report.parent / "summary.json").read_text())
    said = "output 0: requires_grad eager False, torchscript True"
    sighting = {"i": 5, "pipeline": "torchscript", "verdict": "miscompile", "check": "values",
                "explanation": said}
    row = dict(summary["root_causes"][0], verdict="crash", check="exceptions",
               campaign_checks=["miscompile / values"], campaign_sightings=[sighting])
    html = render_html(dict(summary, root_causes=[row]))
    assert "crash / exceptions (this campaign also miscompile / values)</td>" in html
    assert f"program 5 (torchscript) was miscompile / values: {said}." in html
    assert "program 5 (torchscript)" not in render_html(dict(summary, root_causes=[
        dict(row, campaign_sightings=[])]))


def test_a_fast_path_root_cause_written_when_time_was_up_is_not_called_n_a(tmp_path):
    # fresh user 39's B6: "full: n/a" (legend: no fast-path sighting, nothing to re-run) on an
    # inductor-reinplace entry written unshrunk, unblamed and not re-judged: time was up
    from aliasfuzz.report.data import root_causes

    p = Program((StorageSpec("s0", 4),), (TensorSpec("x", "s0", (4,), (1,)),),
                (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),), ("v0",))
    events = _root_cause_events(tmp_path, p)
    fast = [e for e in events if e["pipeline"] == "inductor-reinplace"]
    assert len(fast) == 1
    fast[0]["budget_spent"] = "not shrunk, not blamed"
    rows = {r["stage"]: r for r in root_causes(tmp_path, events, set())}
    assert rows["joint:remove_noop_ops"]["full"] == "not re-judged (time budget spent)"
    assert rows["scheduler"]["full"] != "not re-judged (time budget spent)"  # inductor only
    fast[0]["full"] = "reproduces"  # re-judged: what it said stands
    rows = {r["stage"]: r for r in root_causes(tmp_path, events, set())}
    assert rows["joint:remove_noop_ops"]["full"] == "reproduces"


def test_the_program_caption_names_the_corpus_the_report_read(tmp_path):
    # fresh user 40's B9: the caption said corpus/<id>/repro.py for a campaign whose corpus
    # was another folder
    _campaign(tmp_path, "c2", time.time(), with_finding=True)
    (tmp_path / "corpus").rename(tmp_path / "elsewhere")
    out = write_report("c2", state=tmp_path / "state", corpus=tmp_path / "elsewhere",
                       out=tmp_path / "out")
    summary = json.loads((out.parent / "summary.json").read_text())
    html = out.read_text()
    first = summary["root_causes"][0]["id"]
    assert f"{tmp_path / 'elsewhere' / first / 'repro.py'}" in html
    assert f"corpus/{first}/repro.py" not in html


def test_a_new_entry_written_unblamed_when_time_was_up_is_not_new_nor_shrunk(tmp_path):
    # fresh user 40's B8: two unshrunk copies of a known crash, written unblamed when the
    # time budget was spent, counted "2 new" with cards saying "6 → 6 after shrinking"
    from aliasfuzz.report import render_html

    _campaign(tmp_path, "c2", time.time(), with_finding=True)
    journal = tmp_path / "state" / "runs" / "c2" / "journal.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    for e in events:  # the new root cause (remove_noop_ops) written as found
        if e.get("stage") == "joint:remove_noop_ops":
            e["budget_spent"] = "not shrunk, not blamed"
    journal.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = write_report("c2", state=tmp_path / "state", corpus=tmp_path / "corpus",
                       out=tmp_path / "out")
    s = json.loads((out.parent / "summary.json").read_text())
    assert [r["status"] for r in s["root_causes"]] == ["unblamed", "known", "corpus"]
    assert (s["counts"]["new"], s["counts"]["unblamed"]) == (0, 1)
    assert s["upstream_drafts"] == []  # an issue draft of a maybe-known bug's copy: none
    html = out.read_text()
    assert ("root causes: 0 new, 1 known upstream, 1 already in the corpus, 1 left unblamed "
            "when the time budget was spent; 2 corpus entries written</div>") in html
    # the known bug's entry was written as found too (the fixture's); the old entry's was shrunk
    assert html.count("statements\n5 (not shrunk: time budget spent)") == 2
    assert html.count("after shrinking") == 1
    row = s["root_causes"][0]
    cut = render_html(dict(s, root_causes=[dict(row, budget_spent="shrink cut short, not blamed")]))
    assert "5 &rarr; 1 (shrink cut short: time budget spent)" in cut
    assert "after shrinking" not in cut
