"""A worker death is attributed by where it happened: inside the system under test it is a
``crash`` finding; inside aliasfuzz (the oracle) it is an internal error, reported loudly
and never a finding.

Two twin campaigns through ``aliasfuzz run`` (fresh processes) on the real
``inductor-reinplace`` pipeline and the real oracle, with a plugin (loaded in every worker)
that aborts the worker at a known point: inside Inductor's reinplace pass (PyTorch's
side), or inside the oracle's differential check (aliasfuzz's side). The oracle campaign
also runs the debug pipeline ``debug-raise`` (a harness exception the live worker
reports), so both kinds of internal error go through one path.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.common.cli import run_cli

#: Aborts the worker inside the oracle: the differential check, which every judged run
#: reaches after the eager reference and the pipeline ran.
ORACLE_ABORT = """
import os
from aliasfuzz.oracle import judge as _judge


def _abort(*args, **kwargs):
    os.abort()


_judge.differential = _abort
"""

#: Aborts the worker inside PyTorch's pass under test (a documented plugin hook).
PASS_ABORT = """
import os


def install(api):
    def make(original):
        def reinplace_inplaceable_ops(*args, **kwargs):
            os.abort()

        return reinplace_inplaceable_ops

    api.wrap("torch._inductor.fx_passes.post_grad", "reinplace_inplaceable_ops", make)
"""


def _campaign(root, plugin_source, *extra):
    (root / "corpus").mkdir(parents=True)  # a named --corpus must exist
    plugin = root / "plugin.py"
    plugin.write_text(plugin_source)
    r = run_cli(
        "run", "--programs", "1", "--seed", "0", "--workers", "1", "--plugin", plugin,
        "--corpus", root / "corpus", "--state", root / "state", "--report", root / "reports",
        "-q", *extra,
        env={"ALIASFUZZ_DEBUG_PIPELINES": "1"},
    )  # fmt: skip
    (run_dir,) = (root / "state" / "runs").iterdir()
    events = [json.loads(x) for x in (run_dir / "journal.jsonl").read_text().splitlines()]
    return r, run_dir, events


@pytest.fixture(scope="module")
def oracle_death(tmp_path_factory):
    """A campaign whose workers die inside the oracle (and raise on ``debug-raise``)."""
    root = tmp_path_factory.mktemp("internal") / "oracle"
    return root, *_campaign(root, ORACLE_ABORT, "--pipelines", "inductor-reinplace,debug-raise")


def test_a_death_inside_the_oracle_is_an_internal_error_not_a_finding(oracle_death):
    root, r, run_dir, events = oracle_death
    assert r.returncode == 0, r.stdout + r.stderr  # no finding fails the run
    tasks = {(e["i"], e["pipeline"]): e["outcome"] for e in events if e["t"] == "task"}
    assert len(tasks) == 2
    for i in (0,):
        died = tasks[(i, "inductor-reinplace")]
        assert (died["verdict"], died["check"]) == ("internal-error", "signal:SIGABRT"), died
        assert "in aliasfuzz (harness" in died["explanation"]
        assert "not in the system under test" in died["explanation"]
        assert "oracle/judge.py" in died["internal_error"]  # faulthandler's stack
        raised = tasks[(i, "debug-raise")]
        assert raised["verdict"] == "internal-error"
        assert "deliberate harness bug" in raised["explanation"]
        assert "Traceback" in raised["internal_error"]
    # never a finding: nothing shrunk, nothing in the corpus
    assert not any(e["t"] in ("finding", "internal") for e in events)
    assert not (root / "corpus").exists() or not any((root / "corpus").iterdir())
    assert "finding " not in r.stdout


def test_internal_errors_are_printed_counted_and_reported(oracle_death):
    root, r, run_dir, events = oracle_death
    lines = [x for x in r.stdout.splitlines() if x.startswith("internal error: ")]
    assert len(lines) == 2, r.stdout
    assert any("program 0 on inductor-reinplace: worker died (signal:SIGABRT) in aliasfuzz"
               in x for x in lines)  # fmt: skip
    assert any("program 0 on debug-raise: RuntimeError: debug-raise" in x for x in lines)
    assert "aliasfuzz: 2 internal errors, see" in r.stderr
    assert (run_dir / "internal-errors.log").read_text().count("program 0 on ") == 2
    summary = json.loads((root / "reports" / run_dir.name / "summary.json").read_text())
    internal = summary["internal_errors"]
    assert internal["count"] == 2 and len(internal["errors"]) == 2
    assert {e["pipeline"] for e in internal["errors"]} == {"inductor-reinplace", "debug-raise"}
    assert all(e["stack"] and e["summary"] for e in internal["errors"])
    assert summary["findings"] == []
    (row,) = summary["history"]
    assert row["internal_errors"] == 2
    with sqlite3.connect(root / "state" / "history.sqlite") as db:
        (n,) = db.execute("SELECT internal_errors FROM campaigns").fetchone()
    assert n == 2
    html = (root / "reports" / run_dir.name / "index.html").read_text()
    assert 'id="internal"' in html and "Internal errors of aliasfuzz" in html
    assert html.count('class="internal bad"') == 2 and "oracle/judge.py" in html


def test_a_death_inside_the_pass_under_test_is_a_crash_finding(tmp_path):
    r, run_dir, events = _campaign(
        tmp_path / "pass", PASS_ABORT, "--pipelines", "inductor-reinplace", "--no-shrink"
    )
    assert r.returncode == 0, r.stdout + r.stderr  # crash is not in the default --fail-on
    tasks = [e for e in events if e["t"] == "task"]
    assert len(tasks) == 1
    for t in tasks:  # re-run in a fresh worker first: it died there too
        out = t["outcome"]
        assert (out["verdict"], out["check"]) == ("crash", "signal:SIGABRT"), out
        assert "in the system under test: pipeline inductor-reinplace" in out["explanation"]
        assert "first" not in out and "internal_error" not in out
    assert "internal error" not in r.stdout + r.stderr
    entries = list((tmp_path / "pass" / "corpus").iterdir())
    assert entries
    for e in entries:
        meta = json.loads((e / "meta.json").read_text())
        assert meta["expected"] == {
            "pipeline": "inductor-reinplace", "verdict": "crash", "check": "signal:SIGABRT"
        }  # fmt: skip
        # the stack of the death, innermost frame first: the pass, called by PyTorch
        assert meta["diff"].startswith("Fatal Python error: Aborted")
        assert "in reinplace_inplaceable_ops" in meta["diff"]
        assert "torch/_functorch" in meta["diff"]
