"""kill -9 during a campaign, then ``aliasfuzz run --resume``: no finding lost, no
half-written corpus entry, the same programs as an uninterrupted campaign."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from aliasfuzz.campaign.corpus import list_entries, load_entry
from tests.common.cli import run_cli


def main(argv: list[str]) -> int:
    """``aliasfuzz argv`` in a fresh process (as a user resumes); its exit code."""
    return run_cli(*argv).returncode


def _cmd(tmp, name, *extra):
    (tmp / name / "corpus").mkdir(parents=True, exist_ok=True)  # a named --corpus must exist
    return [
        sys.executable,
        "-m",
        "aliasfuzz.cli",
        "run",
        "--programs",
        "16",
        "--seed",
        "11",
        "--pipelines",
        "debug-miscompile",
        "--workers",
        "1",
        "--report",
        "none",
        "-q",
        "--corpus",
        str(tmp / name / "corpus"),
        "--state",
        str(tmp / name / "state"),
        *extra,
    ]


def _events(state):
    (j,) = (state / "runs").glob("*/journal.jsonl")
    return [json.loads(x) for x in j.read_text().splitlines() if x.endswith("}")]


def test_kill_9_then_resume_loses_nothing(tmp_path, monkeypatch):
    env = dict(os.environ, ALIASFUZZ_DEBUG_PIPELINES="1", ALIASFUZZ_DEBUG_DELAY="0.3")
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    # reference: the same campaign, uninterrupted
    ref = subprocess.run(
        _cmd(tmp_path, "ref"), env=env, capture_output=True, text=True, timeout=240
    )
    assert ref.returncode == 1, ref.stderr
    want = {p.name for p in list_entries(tmp_path / "ref" / "corpus")}
    assert want

    proc = subprocess.Popen(
        _cmd(tmp_path, "k"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    state = tmp_path / "k" / "state"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # kill once a finding is on disk, mid-campaign
        ev = (
            _events(state)
            if (state / "runs").exists() and list((state / "runs").glob("*/journal.jsonl"))
            else []
        )
        if any(e["t"] == "finding" for e in ev) and sum(e["t"] == "task" for e in ev) >= 5:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _events(state)
    assert not any(e["t"] == "end" for e in before)
    assert sum(e["t"] == "task" for e in before) < 16  # really killed mid-campaign
    for p in list_entries(tmp_path / "k" / "corpus"):  # no half-written entry is visible
        load_entry(p)

    assert main(["run", "--resume", "--state", str(state), "-q"]) == 1
    after = _events(state)
    tasks = [e for e in after if e["t"] == "task"]
    assert sorted(e["i"] for e in tasks) == list(range(16))  # each program exactly once
    assert after[-1]["t"] == "end"
    got = {p.name for p in list_entries(tmp_path / "k" / "corpus")}
    assert got == want
    assert not list((tmp_path / "k" / "corpus").glob(".tmp-*"))
    ref_h = sorted(
        (e["i"], e["h"]) for e in _events(tmp_path / "ref" / "state") if e["t"] == "task"
    )
    assert sorted((e["i"], e["h"]) for e in tasks) == ref_h


def test_sigterm_interrupts_a_campaign_that_resume_finishes(tmp_path, monkeypatch):
    # a CI timeout or a batch scheduler sends SIGTERM; a background job started by a shell
    # ignores SIGINT: both must leave an interrupted, resumable campaign (exit 130)
    env = dict(os.environ, ALIASFUZZ_DEBUG_PIPELINES="1", ALIASFUZZ_DEBUG_DELAY="0.3")
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    proc = subprocess.Popen(
        _cmd(tmp_path, "t"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )
    state = tmp_path / "t" / "state"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if list(state.glob("runs/*/journal.jsonl")) and sum(
            e["t"] == "task" for e in _events(state)
        ) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    before = _events(state)
    assert not any(e["t"] == "end" for e in before)
    assert sum(e["t"] == "task" for e in before) < 16
    (spent,) = [e["elapsed"] for e in before if e["t"] == "interrupted"]
    # the command it prints names this campaign's own folder: `--resume --state` takes the
    # latest unfinished campaign of the state, another one when two share it (fresh user 45)
    (said,) = re.findall(r"`aliasfuzz (run --resume [^`]+)` continues it", err)
    # fresh user 52's B5: findings in flight are not lost, and the line says so
    assert "still being confirmed or shrunk when it stopped is filed then" in err, err
    (run_dir,) = state.glob("runs/*")
    assert said.split() == ["run", "--resume", str(run_dir)], err
    r = run_cli(*said.split(), "-q")
    assert r.returncode == 1, r.stderr
    after = _events(state)
    assert sorted(e["i"] for e in after if e["t"] == "task") == list(range(16))
    assert after[-1]["t"] == "end"
    assert not list(state.glob("runs/*/lock"))  # a finished campaign leaves no lock file
    # the seconds spent before the interruption count (the fresh user saw the total drop)
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("campaign ")]
    assert float(line.split(" runs in ")[1].split(" s")[0]) >= spent


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux /proc; empty where it cannot be read)."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_sigterm_abandons_the_programs_in_flight_and_resume_redoes_each_once(tmp_path,
                                                                             monkeypatch):
    # fresh user 22: SIGTERM waited about 40 s for an in-flight Inductor compile, past a
    # supervisor's TERM-then-KILL (10 s); here every program stalls 60 s in its pipeline
    env = dict(os.environ, ALIASFUZZ_DEBUG_PIPELINES="1", ALIASFUZZ_DEBUG_DELAY="60")
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    proc = subprocess.Popen(_cmd(tmp_path, "a", "--workers", "2"), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    state = tmp_path / "a" / "state"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # both workers inside a program's pipeline
        phases = [p.read_text() for p in state.glob("runs/*/workers/w*/phase")]
        if sum(p.startswith("sut") for p in phases) == 2:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"no worker reached a program: {proc.stderr.read()}")
    workers = _children(proc.pid)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    took = time.monotonic() - t0
    assert proc.returncode == 130, err
    assert took < 20, f"SIGTERM took {took:.1f} s: the programs in flight were waited for"
    for pid in workers:  # killed and reaped, not left to finish their program
        assert not os.path.exists(f"/proc/{pid}"), pid
    before = _events(state)
    assert not any(e["t"] in ("task", "end") for e in before)  # nothing judged, nothing lost
    (spent,) = [e["elapsed"] for e in before if e["t"] == "interrupted"]
    (elapsed,) = state.glob("runs/*/elapsed")
    assert abs(float(elapsed.read_text()) - spent) < 1  # not left at its last 5 s tick

    r = run_cli("run", "--resume", "--state", state, "-q", env={"ALIASFUZZ_DEBUG_DELAY": "0"})
    assert r.returncode == 1, r.stderr
    after = _events(state)
    assert sorted(e["i"] for e in after if e["t"] == "task") == list(range(16))  # each once
    assert after[-1]["t"] == "end"
    assert any(e["t"] == "finding" and e.get("id") for e in after)


def test_sigterm_after_the_summary_exits_with_the_campaign_s_code(tmp_path, monkeypatch):
    # fresh user 22: a SIGTERM after the summary ("(done)") gave 143, not the campaign's code
    env = dict(os.environ, ALIASFUZZ_DEBUG_PIPELINES="1")
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    proc = subprocess.Popen(_cmd(tmp_path, "d"), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:  # the summary line: the campaign is over, its code is 1
        if line.startswith("campaign ") and "(done)" in line:
            proc.send_signal(signal.SIGTERM)  # ProcessLookupError never: not yet waited for
            t0 = time.monotonic()
            break
    proc.communicate(timeout=60)
    assert proc.returncode == 1, proc.returncode  # -15 (143 in a shell) before
    assert time.monotonic() - t0 < 10  # no shutdown to wait for after the summary


def test_run_in_process_leaves_the_signal_handlers_as_it_found_them(tmp_path, monkeypatch):
    # run's SIGTERM after its summary exits with its code (above): a caller of main() that
    # goes on (a test, a script) gets its own handlers back
    from aliasfuzz.cli import main as cli_main

    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    assert cli_main(_cmd(tmp_path, "p", "--programs", "1")[3:]) in (0, 1)
    assert {s: signal.getsignal(s) for s in before} == before


def _cut_journal(state, keep) -> None:
    """Keep the journal events ``keep`` accepts (a simulated kill -9 after them)."""
    (j,) = (state / "runs").glob("*/journal.jsonl")
    ev = [e for e in _events(state) if keep(e)]
    j.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in ev))


def test_resume_honours_budget_flags_given_on_its_command_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    state = tmp_path / "b" / "state"
    assert main(_cmd(tmp_path, "b")[3:] + ["--programs", "6"]) == 1  # later --programs wins
    _cut_journal(state, lambda e: e.get("i") == 0)  # killed after program 0
    (run,) = (state / "runs").iterdir()
    start = json.loads((run / "start.json").read_text())
    start["started"] -= 100  # the campaign had run 100 s before it was killed
    (run / "start.json").write_text(json.dumps(start))

    # --time replaces the saved budget (6 programs); it counts the 100 s already spent
    main(["run", "--resume", "--state", str(state), "--time", "50", "-q"])
    assert sorted(e["i"] for e in _events(state) if e["t"] == "task") == [0]
    assert _events(state)[-1]["t"] == "end"
    saved = json.loads((run / "options.json").read_text())
    assert (saved["time"], saved["programs"]) == (50, None)  # the next resume keeps it

    _cut_journal(state, lambda e: e["t"] != "end")
    r = run_cli("run", "--resume", run, "--programs", "3", "--workers", "2")
    # a resume says what it resumes at once (it printed nothing until its first result)
    assert r.stderr.splitlines()[0] == f"aliasfuzz: resuming campaign {run.name} ({run})", r.stderr
    assert sorted(e["i"] for e in _events(state) if e["t"] == "task") == [0, 1, 2]
    saved = json.loads((run / "options.json").read_text())
    assert (saved["time"], saved["programs"], saved["workers"]) == (None, 3, 2)
    assert "programs" in r.stdout


def test_resume_refuses_flags_that_would_change_the_campaign(tmp_path, monkeypatch):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    state = tmp_path / "c" / "state"
    main(_cmd(tmp_path, "c")[3:] + ["--programs", "1"])
    _cut_journal(state, lambda e: e["t"] != "end")
    for flags, name in [
        (["--seed", "9"], "--seed"),
        (["--pipelines", "debug-segfault"], "--pipelines"),
        (["--no-shrink"], "--no-shrink"),
        (["--config", "x.toml"], "--config"),
    ]:
        r = run_cli("run", "--resume", "--state", state, *flags, "-q")
        err = r.stderr
        assert r.returncode == 2 and len(err.strip().splitlines()) == 1 and name in err, err
    assert not any(e["t"] == "end" for e in _events(state))  # nothing ran


def test_a_second_driver_on_a_running_campaign_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    from aliasfuzz.campaign.driver import _lock

    state = tmp_path / "state"
    (tmp_path / "corpus").mkdir()
    args = ["run", "--programs", "1", "--pipelines", "debug-miscompile", "--state", str(state),
            "--corpus", str(tmp_path / "corpus"), "--report", "none", "-q", "--workers", "1"]
    assert main(args) in (0, 1)
    (run_dir,) = (state / "runs").iterdir()
    # a running campaign has no end event yet (a done one is refused before its lock is read)
    journal = run_dir / "journal.jsonl"
    journal.write_text("".join(line for line in journal.read_text().splitlines(keepends=True)
                               if '"t": "end"' not in line))
    held = _lock(run_dir, run_dir.name)  # as a running driver holds it (another process)
    try:
        # not -q: "resuming campaign ..." came first and made the error two lines (fresh
        # user 28); it is said once the lock is held
        r = run_cli("run", "--resume", run_dir, "--state", state)
        assert r.returncode == 2, r.stderr
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and "being run by another aliasfuzz process" in err[0]
    finally:
        held.close()
    # the lock dies with its holder: the folder can be locked again
    _lock(run_dir, run_dir.name).close()


def test_saved_folders_are_absolute_so_a_resume_elsewhere_writes_in_place(tmp_path, monkeypatch):
    # a fresh user's --resume from the parent folder wrote its report beside the checkout:
    # options.json kept the default "reports" relative; "none" (no report) stays a sentinel
    from aliasfuzz.campaign.options import CampaignOptions

    monkeypatch.chdir(tmp_path)
    d = CampaignOptions(programs=1).to_json()
    assert d["corpus"] == str(tmp_path / "corpus") and d["report"] == str(tmp_path / "reports")
    assert d["state"] == str(tmp_path / ".aliasfuzz")
    assert CampaignOptions(programs=1, report="none").to_json()["report"] == "none"


def test_time_before_a_kill_counts_though_the_journal_is_older(tmp_path, monkeypatch):
    # fresh user 20: a campaign killed at 66 s whose last journal event was older resumed
    # with only the journal's seconds spent; the elapsed file keeps the rest
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    state = tmp_path / "e" / "state"
    assert main(_cmd(tmp_path, "e")[3:] + ["--programs", "2"]) in (0, 1)
    _cut_journal(state, lambda e: e.get("i") == 0)  # killed after program 0
    (run,) = (state / "runs").iterdir()
    assert float((run / "elapsed").read_text()) >= 0  # written while it ran
    (run / "elapsed").write_text("100.0\n")  # it had run 100 s when it was killed
    main(["run", "--resume", "--state", str(state), "--time", "50", "-q"])
    assert sorted(e["i"] for e in _events(state) if e["t"] == "task") == [0]  # budget spent


def test_findings_left_when_the_budget_and_its_tail_are_spent_are_kept_unshrunk(tmp_path,
                                                                                monkeypatch):
    # fresh user 20: a 200 s campaign ran 270 s, shrinking and blaming its last findings
    from aliasfuzz.campaign import driver
    from aliasfuzz.campaign.options import CampaignOptions

    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    monkeypatch.setenv("ALIASFUZZ_DEBUG_DELAY", "0.5")  # a shrink of 40 steps: 20 s
    # the tail ends where the budget starts: every finding is late, whatever the host's speed
    monkeypatch.setattr(driver, "tail_seconds", lambda budget: -budget)
    opts = CampaignOptions(time=3.0, seed=1, pipelines=("debug-miscompile",), workers=1,
                           corpus=str(tmp_path / "corpus"), state=str(tmp_path / "state"),
                           report="none")
    t0 = time.monotonic()
    res = driver.run_campaign(opts, show=False)
    assert res.status == "done" and res.findings
    # the programs started within the budget are judged; their findings are kept, neither
    # shrunk (40 steps of 0.5 s each) nor blamed
    assert all(f["budget_spent"] == "not shrunk, not blamed" for f in res.findings), res.findings
    ev = _events(tmp_path / "state")
    found = [e for e in ev if e["t"] == "finding" and e.get("id")]
    assert found and all(e["shrink_executions"] == 0 for e in found)
    entries = [load_entry(p) for p in list_entries(tmp_path / "corpus")]
    assert entries and all("time budget (--time) was spent" in e.meta["blame_reason"]
                           for e in entries)
    assert time.monotonic() - t0 < 60  # worker start and the programs in flight, no shrink
    # still written, but not "new" in the headline (fresh user 40's B8)
    from aliasfuzz.campaign.cli import root_cause_line

    line = root_cause_line(res.findings, opts.corpus)
    assert line.startswith(f"root causes: {len(entries)} (0 new, ") and (
        f", {len(entries)} left unblamed when the time budget was spent;" in line), line


def test_sigterm_before_the_report_is_written_says_how_to_write_it(tmp_path, monkeypatch):
    # fresh user 24: a SIGTERM right after the summary exited 0 with no report written and
    # no word about it; now either the report is there or stderr gives the command
    env = dict(os.environ, ALIASFUZZ_DEBUG_PIPELINES="1")
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    reports = tmp_path / "reports"
    proc = subprocess.Popen(_cmd(tmp_path, "r", "--programs", "2", "--report", str(reports)),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if line.startswith("campaign ") and "(done)" in line:
            proc.send_signal(signal.SIGTERM)
            break
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    if "report: " in out:  # written before the signal arrived
        index = Path(out.split("report: ")[1].split()[0])
    else:
        assert "stopped before the report was written" in err, err
        cmd = err.split("`")[1].split()
        assert cmd[:2] == ["aliasfuzz", "report"], cmd
        r = run_cli(*cmd[1:], env={"ALIASFUZZ_DEBUG_PIPELINES": "1"})
        assert r.returncode == 0, r.stderr
        index = Path(r.stdout.strip().split()[-1])
    assert index.name == "index.html" and index.is_file(), index
    assert index.parent.parent == reports  # where run --report would have written it


def test_the_time_between_sessions_does_not_count_against_the_budget(tmp_path, monkeypatch):
    # fresh user 43's B1: from the second resume on, every event was measured from the
    # campaign's first start, so the idle gap before a resume was charged to --time
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    state = tmp_path / "g" / "state"
    assert main(_cmd(tmp_path, "g")[3:] + ["--programs", "2"]) in (0, 1)
    (run,) = (state / "runs").iterdir()
    started = json.loads((run / "start.json").read_text())["started"]
    # a first session ran 10 s; a second one, resumed 1000 s after the first start, ran
    # program 0 in 5 s and was killed
    ev = [dict(e, ts=started + 1005) for e in _events(state) if e.get("i") == 0]
    ev.insert(0, {"t": "resume", "elapsed": 10.0, "ts": started + 1000})
    (run / "journal.jsonl").write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in ev))
    (run / "elapsed").write_text("15.0\n")
    main(["run", "--resume", "--state", str(state), "--time", "20", "-q"])
    assert 1 in {e["i"] for e in _events(state) if e["t"] == "task"}  # 5 s of 20 were left
    assert float((run / "elapsed").read_text()) < 100  # not 1005 and more
