"""End-to-end campaigns on the debug pipelines (``aliasfuzz/campaign/_debug.py``):
crash and hang isolation, shrinking a crash, exit codes, determinism, corpus and report.
The ``aliasfuzz`` command runs in a fresh process (:func:`tests.common.cli.run_cli`);
``run_campaign`` is the Python API.

Worker processes start in 2-6 s (importing torch), so the tests share campaigns where
they can and keep the program counts small.
"""

from __future__ import annotations

import json

import pytest

from aliasfuzz.campaign.corpus import list_entries, load_entry
from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.options import CampaignOptions, merge_options
from aliasfuzz.campaign.shrink import shrink
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from tests.common.cli import run_cli


@pytest.fixture(autouse=True)
def _debug_pipelines(monkeypatch):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")


def _opts(tmp_path, **kw) -> CampaignOptions:
    base = dict(
        corpus=str(tmp_path / "corpus"),
        state=str(tmp_path / "state"),
        report="none",
        workers=1,
        shrink=False,
    )
    base.update(kw)
    return CampaignOptions(**base)


def _tasks(res) -> list[dict]:
    lines = (res.dir / "journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["t"] == "task"]


def test_segfault_and_hang_become_verdicts_and_the_campaign_goes_on(tmp_path):
    res = run_campaign(
        _opts(
            tmp_path, programs=5, pipelines=("debug-segfault", "debug-hang"), workers=2, timeout=3.0
        ),
        show=False,
    )
    assert res.status == "done" and res.programs == 5
    ts = _tasks(res)
    assert len(ts) == 10
    for t in ts:
        kinds, v = set(t["op_kinds"]), t["outcome"]["verdict"]
        if t["pipeline"] == "debug-segfault":
            want = "crash" if kinds & {"inplace", "custom"} else "ok"
            assert (v, t["outcome"]["check"] if v == "crash" else None) == (
                want,
                "signal:SIGSEGV" if want == "crash" else None,
            )
        else:
            assert v == ("timeout" if "custom" in kinds else "ok"), t
    assert {"crash", "ok"} <= {t["outcome"]["verdict"] for t in ts}
    for p in list_entries(tmp_path / "corpus"):
        assert load_entry(p).meta["expected"]["verdict"] in ("crash", "timeout")


def test_a_crash_shrinks_by_re_running_in_a_subprocess(tmp_path):
    x = TensorSpec("x", "s0", (4, 4), (4, 1))
    program = Program(
        (StorageSpec("s0", 16),),
        (x,),
        (
            Op("sin", ("x",), {}, ("v0",)),
            Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",)),
            Op("clone", ("v1",), {}, ("v2",)),
        ),
        ("v2", "v0"),
    )
    worker = Worker(tmp_path / "w", timeout=60, recycle=100)
    def task(p):
        return worker.run(
            {
                "program": p.to_json(),
                "pipeline": "debug-segfault",
                "device": "cpu",
            }
        )
    try:
        first = task(program)
        assert (first["verdict"], first["check"]) == ("crash", "signal:SIGSEGV")
        small, out, spent = shrink(program, first, task, budget=10)
        bug = worker.run({"program": program.to_json(), "pipeline": "debug-raise",
                          "device": "cpu"})
    finally:
        worker.close()
    assert (out["verdict"], out["check"]) == ("crash", "signal:SIGSEGV") and worker.started >= 2
    # Hypothesis's shrinker: the in-place op alone (sin bypassed: it writes x now); no output
    assert [(op.op, op.args) for op in small.body] == [("add_.Scalar", ("x",))]
    assert small.outputs == ()
    assert 0 < spent <= 10
    # a harness exception is not a verdict: it comes back as an internal error
    assert set(bug) == {"internal_error", "costs"}  # every answer carries its stage costs
    assert "deliberate harness bug" in bug["internal_error"]


def test_exit_codes_dedup_report_and_determinism(tmp_path):
    args = [
        "run",
        "--programs",
        "8",
        "--pipelines",
        "debug-miscompile",
        "--seed",
        "3",
        "--corpus",
        str(tmp_path / "corpus"),
        "--state",
        str(tmp_path / "state"),
        "--report",
        str(tmp_path / "reports"),
        "-q",
        # fresh programs only: the second campaign starts with the first's findings in the
        # corpus, so it would mutate other sources (mutants are a function of the seed, the
        # index and the sources listed at the start), and neither its programs nor its
        # "(in corpus" findings would be the first's
        "--mutate",
        "0",
    ]
    (tmp_path / "corpus").mkdir()  # a named --corpus must exist
    first = run_cli(*args, "--workers", "2")
    assert first.returncode == 1, first.stderr  # new miscompiles
    out1 = first.stdout
    assert "(new" in out1 and "report: " in out1
    # the stage printed is the root's whole, unblamed:<pipeline> (fresh user 20: "unblamed")
    found = [x for x in out1.splitlines() if x.startswith("finding ")]
    assert found and all(" stage=unblamed:debug-miscompile " in x for x in found), out1
    html = out1.split("report: ")[1].strip()
    assert html.endswith("index.html")
    summary = json.loads((tmp_path / "reports" / html.split("/")[-2] / "summary.json").read_text())
    assert summary["campaign"]["programs"] == 8 and summary["findings"]
    # --mutate 0: no mutant, said in the headline and summary.json
    assert summary["campaign"]["mutants"] == 0 and summary["campaign"]["mutated_from"] == {}
    (head,) = [x for x in out1.splitlines() if x.startswith("campaign ")]
    assert ": 8 programs (0 mutants), 8 runs in " in head, head
    # then one line per pipeline with every verdict count (one pipeline here), as summary.json
    lines = out1.splitlines()
    (per,) = lines[lines.index(head) + 1:lines.index(head) + 2]
    assert per.startswith("  debug-miscompile: "), per
    counts = [x.rsplit(" ", 1) for x in per.split(": ", 1)[1].split(", ")]
    assert {v: int(n) for v, n in counts} == summary["verdicts"]["debug-miscompile"]
    # the cost table: per task in the journal, in the summary, the report and the run summary
    rows = {r["stage"]: r for r in summary["costs"]["rows"]}
    assert {"generate", "worker.start", "worker", "shrink", "blame", "total"} <= set(rows)
    assert abs(sum(r["share"] for s, r in rows.items() if s != "total") - 1.0) < 0.01
    assert 'id="costs"' in (tmp_path / "reports" / html.split("/")[-2] / "index.html").read_text()
    assert "where the time went (2 workers x" in out1
    run1 = sorted((tmp_path / "state" / "runs").iterdir())[0]
    events = [json.loads(x) for x in (run1 / "journal.jsonl").read_text().splitlines()]
    tasks = [e for e in events if e["t"] == "task"]
    assert sum("generate" in e["costs"] for e in tasks) == 8  # once per program
    assert all(e["costs"]["worker"] > 0 and "worker.ipc" in e["costs"] for e in tasks)
    assert all({"shrink", "blame"} <= set(e["costs"]) for e in events if e["t"] == "finding"
               and e.get("id"))
    second = run_cli(*args, "--workers", "1")
    assert second.returncode == 0, second.stderr  # the same findings: in the corpus already
    out2 = second.stdout
    assert "(in corpus" in out2 and "(new" not in out2
    # the two campaigns (different worker counts) ran the same programs
    runs = sorted((tmp_path / "state" / "runs").iterdir())
    hashes = []
    for d in runs:
        ev = [json.loads(x) for x in (d / "journal.jsonl").read_text().splitlines()]
        hashes.append(sorted((e["i"], e["h"]) for e in ev if e["t"] == "task"))
    assert len(runs) == 2 and hashes[0] == hashes[1] and len(hashes[0]) == 8
    assert len({h for _, h in hashes[0]}) > 1
    entries = [load_entry(p) for p in list_entries(tmp_path / "corpus")]
    assert entries and all(e.meta["expected"]["verdict"] == "miscompile" for e in entries)
    assert all("inplace" in e.meta["root"]["evidence"] for e in entries)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--pipelines", "inductor,nope"],
        ["run", "--bogus"],
        ["run", "--programs", "0"],
        ["run", "--fail-on", "ok"],
        ["run", "--config", "missing.toml"],
        ["run", "--time", "5", "--programs", "3"],
        ["replay", "no/such/dir"],
        ["check", "missing.py"],
    ],
)
def test_bad_flags_give_one_line_and_exit_2(argv, tmp_path):
    r = run_cli(*argv, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("aliasfuzz: error:")


def test_config_file_is_merged_under_flags(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[run]\nprograms = 3\npipelines = "aot_eager,inductor"\nseed = 5\n')
    o = merge_options({"seed": 6, "workers": None}, str(cfg))
    assert (o.programs, o.time, o.seed, o.pipelines) == (3, None, 6, ("aot_eager", "inductor"))
    o = merge_options({"time": 9.0}, str(cfg))  # a budget flag replaces the config's budget
    assert (o.programs, o.time) == (None, 9.0)
    assert CampaignOptions().time == 120.0
    cfg.write_text("[run]\nprogramz = 3\n")
    with pytest.raises(InvalidArgument, match="programz"):
        merge_options({}, str(cfg))


def test_a_campaign_that_found_nothing_prints_its_root_cause_headline(tmp_path):
    # fresh user 41's B4: no "root causes:" line at all, where the report's card says 0
    corpus = tmp_path / "c"
    corpus.mkdir()
    r = run_cli("run", "--programs", "1", "--pipelines", "eager", "--no-shrink", "-q",
                "--report", "none", "--corpus", corpus, "--state", tmp_path / "s")
    assert r.returncode == 0, r.stderr
    assert ("root causes: 0 (0 new, 0 known upstream, 0 already in the corpus; "
            "0 corpus entries written)") in r.stdout.splitlines(), r.stdout
    # fresh user 51's B4: a campaign of the reference alone says it cannot find anything
    (note,) = [x for x in r.stderr.splitlines() if "--pipelines eager" in x]
    assert note.startswith("aliasfuzz: note: --pipelines eager runs the reference against itself")


def test_a_campaign_that_starts_an_empty_default_corpus_away_from_the_checkout_says_so(tmp_path):
    # fresh user 45's B5: `run` from bench/ filed an entry the checkout's corpus holds as new,
    # into a fresh ./corpus, without a word
    r = run_cli("run", "--programs", "1", "--pipelines", "eager", "--no-shrink", "-q",
                "--report", "none", "--state", "st", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (note,) = [x for x in r.stderr.splitlines() if "empty corpus" in x]
    assert note.startswith(f"aliasfuzz: note: no ./corpus here: starting an empty corpus in "
                           f"{tmp_path / 'corpus'}"), note
    assert (tmp_path / "corpus").is_dir()
    # the second campaign finds it there: no note
    r = run_cli("run", "--programs", "1", "--pipelines", "eager", "--no-shrink", "-q",
                "--report", "none", "--state", "st", cwd=tmp_path)
    assert r.returncode == 0 and "empty corpus" not in r.stderr, r.stderr
