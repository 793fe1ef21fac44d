"""kill -9 during a campaign, then ``aliasfuzz run --resume``: no finding lost, no
half-written corpus entry, the same programs as an uninterrupted campaign."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from aliasfuzz.campaign.corpus import list_entries, load_entry
from aliasfuzz.cli import main


def _cmd(tmp, name, *extra):
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
