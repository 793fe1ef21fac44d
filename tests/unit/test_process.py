"""The process layer (``fuzz/process.py``): each entry point sets the process up itself, and
a worker's death is attributed by the phase its child last wrote.

Fresh processes where the point is a fresh process: the Python API's eager reference and
judge on a program with a user Triton kernel, with nothing else run before in the process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from aliasfuzz.campaign.worker import attribute_death, innermost_frame
from aliasfuzz.fuzz import process
from tests.common.procs import alive

M6 = Path(__file__).resolve().parents[2] / "bench" / "mutants" / "programs" / "m6_triton_readonly.py"


def _fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    "api",
    [
        # the eager reference alone, as the oracle and the pipelines call it
        "from aliasfuzz.fuzz.eager import run_callable\n"
        "from aliasfuzz.oracle.confirm import run_callable_named\n"
        "r = run_callable_named(case.module.program, ['x'], case.module.inputs())\n"
        "assert r.error is None, r.error\n"
        "print(r.inputs_after[0].tolist())\n",
        # the oracle's entry point on the case
        "from aliasfuzz.oracle.cases import judge_one\n"
        "print(judge_one(case, 'aot_eager').verdict.value)\n",
    ],
    ids=["eager-reference", "judge"],
)
def test_a_fresh_process_runs_a_user_triton_kernel_on_cpu(api):
    pytest.importorskip("triton")
    r = _fresh(
        "from aliasfuzz.oracle.cases import load_case\n"
        f"case = load_case({str(M6)!r})\n" + api
    )
    if torch.cuda.is_available():
        # on a GPU host the CPU layer is off (fuzz/triton_compat.py): Triton refuses CPU
        # tensors, so eager raises and the program has no eager meaning to judge
        assert "cannot be accessed from Triton (cpu tensor?)" in r.stderr or (
            r.stdout.strip() == "invalid-program"), (r.stdout, r.stderr)
        return
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in ("ok", str([float(i + 1) for i in range(8)])), r.stdout


def test_phases_nest_and_are_written_for_the_parent(tmp_path, monkeypatch):
    phase_file = tmp_path / "phase"
    monkeypatch.setenv(process.PHASE_ENV, str(phase_file))
    monkeypatch.setattr(process, "_fd", None)
    monkeypatch.setattr(process, "_written", None)
    assert process.phase() == "harness"
    with process.system_under_test("pipeline aot_eager"):
        assert process.read_phase(phase_file) == "sut: pipeline aot_eager"
        with process.harness("oracle"):
            assert process.read_phase(phase_file) == "harness: oracle"
            with process.system_under_test("eager"):
                assert process.read_phase(phase_file) == "sut: eager"
            assert process.read_phase(phase_file) == "harness: oracle"
        assert process.phase() == "sut: pipeline aot_eager"
    assert process.read_phase(phase_file) == "harness"
    with pytest.raises(ValueError), process.system_under_test("eager"):
        raise ValueError("the program's own failure")
    assert process.read_phase(phase_file) == "harness"  # left on an exception too
    assert process.read_phase(tmp_path / "missing") is None


def test_setup_is_idempotent():
    process.setup()
    process.setup()
    assert process._SETUP_DONE


_DUMP = """\
Fatal Python error: Aborted

Current thread 0x00007f3e90030b80 (most recent call first):
  File "{inner}", line 4 in _bytes
  File "/x/aliasfuzz/campaign/_judge.py", line 70 in _judged

Extension modules: numpy._core._multiarray_umath, torch._C (total: 2)
"""


def _oracle_file() -> str:
    import aliasfuzz.oracle.footprints as fp

    return fp.__file__


@pytest.mark.parametrize(
    ("phase", "inner", "internal"),
    [
        ("sut: pipeline inductor", "/x/torch/_inductor/fx_passes/reinplace.py", False),
        ("sut: eager", "/tmp/w/src/program_1.py", False),
        ("harness", "/x/torch/functional.py", True),  # the oracle called torch: ours
        ("harness: oracle", "/x/torch/functional.py", True),
        ("sut: pipeline inductor-reinplace", None, True),  # the oracle, called by a pass
        (None, "/x/torch/_inductor/fx_passes/reinplace.py", False),  # no phase: as before
    ],
)
def test_a_death_is_attributed_by_where_it_happened(phase, inner, internal):
    log = _DUMP.format(inner=inner or _oracle_file())
    out = attribute_death("signal:SIGABRT", phase, log, 1.0)
    if internal:
        assert set(out) == {"internal_error", "summary", "check", "seconds"}
        assert out["check"] == "signal:SIGABRT"
        assert "not in the system under test" in out["summary"]
        assert "_bytes" in out["summary"] and "_bytes" in out["internal_error"]
    else:
        assert (out["verdict"], out["check"]) == ("crash", "signal:SIGABRT")
        assert out["diff"].startswith("Fatal Python error") and "Extension" not in out["diff"]


def test_innermost_frame_reads_the_dying_thread():
    log = (
        "Fatal Python error: Segmentation fault\n\n"
        'Thread 0x1 (most recent call first):\n  File "/a.py", line 1 in other\n\n'
        'Current thread 0x2 (most recent call first):\n  File "/b.py", line 4 in _bytes\n'
    )
    assert innermost_frame(log) == ("/b.py", 4, "_bytes")
    assert innermost_frame("no dump here") is None


def test_heap_corruption_seen_in_the_harness_is_not_blamed_on_aliasfuzz():
    # glibc aborts at the malloc that finds the heap corrupted (here in the harness), but
    # the corrupting write came earlier: still an internal error, never a finding, with a
    # summary that points at the likely writer instead of aliasfuzz
    log = "corrupted size vs. prev_size\n" + _DUMP.format(inner=_oracle_file())
    out = attribute_death("signal:SIGABRT", "harness", log, 1.0)
    assert "verdict" not in out
    assert "heap corrupted ('corrupted size vs. prev_size')" in out["summary"]
    assert "out-of-bounds write" in out["summary"]
    plain = attribute_death("signal:SIGABRT", "harness", _DUMP.format(inner=_oracle_file()), 1.0)
    assert "heap" not in plain["summary"]


def test_heap_corruption_inside_the_system_under_test_says_so_in_the_crash():
    # tenth audit wave G: a compiled kernel writing out of bounds is memory corruption, which
    # the finding must name (glibc noticed it while the pipeline ran)
    log = "free(): invalid next size (fast)\n" + _DUMP.format(inner="/x/torch/_ops.py")
    out = attribute_death("signal:SIGABRT", "sut: pipeline inductor", log, 1.0)
    assert (out["verdict"], out["check"]) == ("crash", "signal:SIGABRT")
    assert out["explanation"].endswith(
        "(in the system under test: pipeline inductor): glibc found the heap corrupted "
        "('free(): invalid next size (fast)'), an out-of-bounds write"), out["explanation"]
    plain = attribute_death("signal:SIGABRT", "sut: pipeline inductor",
                            _DUMP.format(inner="/x/torch/_ops.py"), 1.0)
    assert "heap" not in plain["explanation"]


def test_a_worker_killed_while_starting_is_started_again(tmp_path, monkeypatch):
    # the fresh user of the tenth session: kill -KILL to a worker before it was ready
    # crashed the whole campaign (exit 1, traceback); now the child is started again
    import os
    import signal
    import threading
    import time

    from aliasfuzz.campaign import worker as worker_mod

    killed: list[int] = []
    real_spawn = worker_mod.Worker._spawn

    def spawn(self):
        def kill_once():
            for _ in range(200):  # the child imports torch for seconds before "ready"
                if self.proc is not None:
                    os.kill(self.proc.pid, signal.SIGKILL)
                    killed.append(self.proc.pid)
                    return
                time.sleep(0.01)

        if not killed:
            threading.Thread(target=kill_once).start()
        real_spawn(self)

    monkeypatch.setattr(worker_mod.Worker, "_spawn", spawn)
    w = worker_mod.Worker(tmp_path / "w", timeout=60, recycle=10)
    try:
        w._start()
        assert killed and w.started == 2 and w.proc is not None and w.proc.poll() is None
        assert w.proc.pid != killed[0]
    finally:
        w.close()



def test_a_worker_killed_from_outside_in_aliasfuzz_is_not_called_a_bug_of_ours():
    out = attribute_death("signal:SIGKILL", "harness", "", 1.0)
    assert "killed from outside" in out["summary"] and "not judged" in out["summary"]
    out = attribute_death("signal:SIGSEGV", "harness", "", 1.0)
    assert out["summary"].startswith("worker died (signal:SIGSEGV) in aliasfuzz")


def test_a_worker_ends_with_its_group_once_the_driver_is_killed(tmp_path):
    # fresh user 20: after kill -9 of the driver its workers ran on for about 30 s (the task
    # in flight); the child's watch (worker.watch_parent) ends it and its group at once
    import os
    import signal
    import time

    if not Path("/proc").is_dir():
        pytest.skip("reads process states from /proc")
    child = textwrap.dedent(f"""
        import os, subprocess, sys, time
        from aliasfuzz.campaign.worker import watch_parent
        watch_parent(int(sys.argv[1]), interval=0.05)
        sleeper = subprocess.Popen(["sleep", "60"])  # a compile worker in the group
        open({str(tmp_path / "pids")!r}, "w").write(f"{{os.getpid()}} {{sleeper.pid}}")
        time.sleep(60)
    """)
    driver = textwrap.dedent(f"""
        import os, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", {child!r}, str(os.getpid())],
                         start_new_session=True)
        time.sleep(60)
    """)
    d = subprocess.Popen([sys.executable, "-c", driver], cwd=Path(__file__).parents[2])
    pids = tmp_path / "pids"
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and " " in pids.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        worker, sleeper = map(int, pids.read_text().split())
        assert alive(worker) and alive(sleeper)
    finally:
        os.kill(d.pid, signal.SIGKILL)
        d.wait()
    deadline = time.monotonic() + 10
    while (alive(worker) or alive(sleeper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(worker) and not alive(sleeper)


def test_a_death_while_the_oracle_ran_another_pipeline_is_not_this_tasks_crash():
    # fresh user 39's B1: full Inductor's out-of-bounds write (crash-lowering-5fcbc5cdc0 on
    # inductor) killed the worker in the cost gate of an inductor-reinplace task, which was
    # filed as a new inductor-reinplace crash whose repro (the fast path) exited 0
    log = "double free or corruption (out)\n" + _DUMP.format(inner="/x/torch/_ops.py")
    out = attribute_death("signal:SIGABRT", "sut: pipeline inductor", log, 1.0,
                          pipeline="inductor-reinplace")
    assert (out["verdict"], out["check"]) == ("unknown", "signal:SIGABRT"), out
    assert "while the oracle ran pipeline inductor for this inductor-reinplace task" in \
        out["explanation"] and "heap corrupted" in out["explanation"], out["explanation"]
    assert out["diff"].startswith("double free") or out["diff"].startswith("Fatal Python error")
    # its own pipeline's death, the eager run's, and one without a known pipeline stay crashes
    for phase, pipeline in (("sut: pipeline inductor", "inductor"), ("sut: eager", "inductor"),
                            ("sut: pipeline inductor", None)):
        assert attribute_death("signal:SIGABRT", phase, log, 1.0,
                               pipeline=pipeline)["verdict"] == "crash", (phase, pipeline)
