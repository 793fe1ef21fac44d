"""A crash or timeout is re-run in a fresh worker before it is recorded: a worker killed from
outside (``SIGKILL``, as an OOM killer or a user sends it) mid-task is not a finding."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from aliasfuzz.campaign.corpus import list_entries
from aliasfuzz.campaign.driver import confirmed, is_flaky, run_campaign
from aliasfuzz.campaign.options import CampaignOptions

# Loaded in every worker (ALIASFUZZ_PLUGINS): the first task anywhere writes its worker's
# pid to $AF_TEST_PIDFILE and waits to be killed; every later task runs normally.
_PLUGIN = """
import os, time
from aliasfuzz.campaign import _debug

_run = _debug.run

def run(program, pipeline):
    mark = os.environ["AF_TEST_PIDFILE"]
    try:
        fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return _run(program, pipeline)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    time.sleep(120)
    return _run(program, pipeline)

_debug.run = run
"""


def _events(res) -> list[dict]:
    return [json.loads(x) for x in (res.dir / "journal.jsonl").read_text().splitlines()]


@pytest.fixture
def _killer_plugin(tmp_path, monkeypatch):
    plugin = tmp_path / "killable.py"
    plugin.write_text(_PLUGIN)
    pidfile = tmp_path / "pid"
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    monkeypatch.setenv("ALIASFUZZ_PLUGINS", str(plugin))
    monkeypatch.setenv("AF_TEST_PIDFILE", str(pidfile))
    return pidfile


def _kill_when_written(pidfile, killed: list) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            text = pidfile.read_text()
        except FileNotFoundError:
            text = ""
        if text:
            os.kill(int(text), signal.SIGKILL)
            killed.append(int(text))
            return
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("pipeline", "real_crash"), [("debug-miscompile", False), ("debug-segfault", True)]
)
def test_a_worker_killed_from_outside_is_not_a_crash_finding(
    tmp_path, _killer_plugin, pipeline, real_crash
):
    killed: list[int] = []
    killer = threading.Thread(target=_kill_when_written, args=(_killer_plugin, killed))
    killer.start()
    opts = CampaignOptions(
        programs=3,
        seed=3,
        pipelines=(pipeline,),
        workers=1,
        corpus=str(tmp_path / "corpus"),
        state=str(tmp_path / "state"),
        report="none",
        shrink=False,
    )
    res = run_campaign(opts, show=False)
    killer.join()
    assert killed and res.status == "done"
    tasks = [e for e in _events(res) if e["t"] == "task"]
    assert sorted(e["i"] for e in tasks) == [0, 1, 2]
    (hit,) = [e for e in tasks if "first" in e["outcome"]]
    assert hit["outcome"]["first"]["check"] == "signal:SIGKILL"
    # the re-run decides: debug-segfault really crashes on in-place and custom ops
    crashes = pipeline == "debug-segfault" and bool({"inplace", "custom"} & set(hit["op_kinds"]))
    assert crashes == real_crash  # both cases are exercised with seed 3
    if crashes:  # a real crash found by a killed worker: recorded, with the re-run's check
        assert (hit["outcome"]["verdict"], hit["outcome"]["check"]) == ("crash", "signal:SIGSEGV")
        assert res.flaky == 0 and any(f["i"] == hit["i"] for f in res.findings)
    else:
        assert hit["outcome"]["verdict"] != "crash" and res.flaky == 1
    end = _events(res)[-1]
    assert (end["t"], end["status"], end["flaky"]) == ("end", "done", res.flaky)
    assert all(f["check"] != "signal:SIGKILL" for f in res.findings)
    assert res.verdicts[(pipeline, "crash")] == sum(
        e["outcome"]["verdict"] == "crash" for e in tasks
    )
    for e in list_entries(tmp_path / "corpus"):
        meta = json.loads((e / "meta.json").read_text())
        assert meta["expected"]["check"] != "signal:SIGKILL"


def test_confirmed_keeps_the_first_run_only_when_the_runs_differ():
    crash = {"verdict": "crash", "check": "signal:SIGKILL", "explanation": "worker died"}
    ok = {"verdict": "ok", "check": None}
    out = confirmed(crash, ok)
    assert out["verdict"] == "ok" and out["first"]["check"] == "signal:SIGKILL"
    assert is_flaky(out)
    again = confirmed(crash, dict(crash))
    assert again == crash and not is_flaky(again)
    other = confirmed(crash, {"verdict": "crash", "check": "signal:SIGSEGV"})
    assert other["check"] == "signal:SIGSEGV" and "first" in other and not is_flaky(other)


def test_only_outcomes_of_a_dead_or_silent_worker_are_re_run():
    from aliasfuzz.campaign.driver import needs_confirmation

    assert needs_confirmation({"verdict": "crash", "check": "signal:SIGKILL"})
    assert needs_confirmation({"verdict": "crash", "check": "exit:1"})
    assert needs_confirmation({"verdict": "crash", "check": "cuda-error"})
    assert needs_confirmation({"verdict": "timeout", "check": "timeout"})
    # an exception the live worker reported is deterministic: no fresh worker for it
    assert not needs_confirmation({"verdict": "crash", "check": "exceptions"})
    assert not needs_confirmation({"verdict": "miscompile", "check": "values"})
    # a worker killed from outside in aliasfuzz's own code: the program was not judged
    assert needs_confirmation({"internal_error": "x", "check": "signal:SIGKILL"})
    assert not needs_confirmation({"internal_error": "x", "check": "exceptions"})
    assert not needs_confirmation({"internal_error": "x", "check": "signal:SIGSEGV"})
