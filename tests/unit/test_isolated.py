"""aliasfuzz.fuzz.isolated: a step in a child interpreter, its answer or how it died."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from aliasfuzz.fuzz import isolated
from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.fuzz.isolated import Died, portable_error, run_isolated
from tests.common.frames import SITE, raised_through
from tests.common.procs import alive


class BackendCompilerFailed(Exception):  # as torch._dynamo.exc's: not a built-in type
    pass


def test_a_chained_error_keeps_type_names_and_messages():
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise BackendCompilerFailed("backend='inductor' raised:") from inner
    except Exception as e:
        outer = e
    copy = portable_error(outer)
    assert type(copy).__name__ == "BackendCompilerFailed" and isinstance(copy, RuntimeError)
    assert str(copy) == str(outer)
    assert type(copy.__cause__) is KeyError and str(copy.__cause__) == str(KeyError("inner"))


def test_a_chained_error_keeps_where_pytorch_raised_it(tmp_path):
    # audit 22 88f92dc7f4: the blame names the part of Inductor that raised a crash of its
    # full compile from these frames, also when the stage ran in a child interpreter
    run = raised_through([(SITE + "torch/_inductor/graph.py", "codegen"),
                          ("/work/aliasfuzz/helper.py", "ours"),
                          (SITE + "torch/_inductor/scheduler.py", "compute_ancestors")],
                         KeyError("op1"))
    try:
        try:
            run()
        except KeyError as inner:
            raise BackendCompilerFailed("backend='inductor' raised:") from inner
    except Exception as e:
        outer = e
    want = ("torch/_inductor/graph.py:codegen", "torch/_inductor/scheduler.py:compute_ancestors")
    assert isolated.raise_frames(outer.__cause__) == want  # only PyTorch's own frames
    copy = portable_error(outer)
    assert copy.__traceback__ is None and copy.__cause__.__traceback__ is None
    assert isolated.raise_frames(copy.__cause__) == want
    assert isolated.raise_frames(copy) == ()  # raised here, in no file of torch
    path = tmp_path / "a.pt"  # as the child sends it back
    torch.save(isolated._walk([outer], BaseException, isolated._chain), path)
    back = isolated._walk(torch.load(path, weights_only=False), isolated._Chain,
                          isolated._rebuild)[0]
    assert isolated.raise_frames(back.__cause__) == want


def test_only_the_innermost_frames_are_kept():
    run = raised_through([(f"/src/pytorch/torch/_inductor/f{i}.py", f"g{i}") for i in range(20)],
                         ValueError("deep"))
    with pytest.raises(ValueError) as info:
        run()
    frames = isolated.raise_frames(portable_error(info.value))
    assert frames == tuple(f"torch/_inductor/f{i}.py:g{i}" for i in range(20 - len(frames), 20))
    assert 0 < len(frames) < 20


def test_a_result_crosses_back_with_its_layout_sharing_and_error(tmp_path):
    base = torch.arange(12.0)
    view = base.view(3, 4).t()
    res = EagerResult((view,), (base,), {"out0": ("x0",)}, error=ValueError("boom"))
    path = tmp_path / "a.pt"
    torch.save(isolated._walk([res], BaseException, isolated._chain), path)
    back = isolated._walk(torch.load(path, weights_only=False), isolated._Chain,
                          isolated._rebuild)[0]
    assert back.outputs[0].stride() == (1, 4)
    assert back.outputs[0].untyped_storage().data_ptr() == \
        back.inputs_after[0].untyped_storage().data_ptr()
    assert type(back.error) is ValueError and str(back.error) == "boom"


def test_a_child_killed_by_a_signal_is_a_death_not_an_answer():
    died = run_isolated("os:abort")
    assert died == Died("signal SIGABRT")
    # an abort that nothing explained may have come from outside: no fault, no corruption
    assert not died.fault and died.heap is None


def test_a_child_that_faults_dies_by_its_own_fault():
    died = run_isolated("ctypes:string_at", (0,))  # reads address 0
    assert died.signal == "SIGSEGV" and died.fault and died.heap == "SIGSEGV"


def test_a_signal_sent_from_outside_is_no_fault(tmp_path, monkeypatch):
    # the fresh user's forgery: kill -ABRT to a child that checks its heap
    import subprocess
    import tempfile
    import threading
    import time

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # only this test's child matches

    def kill() -> None:
        for _ in range(100):
            time.sleep(0.2)
            if subprocess.run(["pkill", "-ABRT", "-f", str(tmp_path)]).returncode == 0:
                return

    killer = threading.Thread(target=kill)
    killer.start()
    died = run_isolated("time:sleep", (60,), timeout=50, check_heap=True)
    killer.join()
    assert died.signal == "SIGABRT" and not died.fault and died.heap is None


def test_a_death_is_read_by_what_the_dying_process_said():
    glibc = Died("signal SIGABRT", "free(): invalid pointer\nFatal Python error: Aborted\n")
    assert glibc.fault and glibc.heap == "free(): invalid pointer"
    cxx = Died("signal SIGABRT", "terminate called after throwing an instance of 'c10::Error'")
    assert cxx.fault and cxx.heap is None
    assert not Died("signal SIGABRT", "Fatal Python error: Aborted\n").fault
    assert not Died("signal SIGKILL").fault and not Died("signal SIGTERM").fault
    assert not Died("exit 1").fault and Died("exit 1").signal is None
    assert Died("signal SIGBUS").heap == "SIGBUS" and Died("signal SIGFPE").heap is None


def test_an_abort_keeps_its_reason_behind_a_long_dump(tmp_path):
    # glibc's message, then a faulthandler dump longer than the kept tail: the death still
    # reads as the child's own fault, not as a kill from outside (CI 55)
    log = tmp_path / "stderr"
    log.write_text("free(): invalid pointer\n" + "  File \"x.py\", line 1\n" * 2000)
    kept = isolated._log_of(str(log))
    assert Died("signal SIGABRT", kept).heap == "free(): invalid pointer"
    assert len(kept) < isolated._LOG_TAIL + 100
    log.write_text("Fatal Python error: Aborted\n" + "x\n" * 5000)
    assert not Died("signal SIGABRT", isolated._log_of(str(log))).fault


def test_a_child_past_its_timeout_is_killed():
    assert run_isolated("time:sleep", (60,), timeout=5) == Died("timeout after 5 s")


def test_a_step_that_raises_is_a_harness_error_with_its_traceback():
    try:
        run_isolated("operator:truediv", (1, 0))
    except RuntimeError as e:
        assert "ZeroDivisionError" in str(e)
    else:
        raise AssertionError("a raising step must raise")


def test_a_step_s_answer_comes_back():
    got = run_isolated("torch:arange", (6,))
    assert torch.equal(got, torch.arange(6))


def _children_isolated(parent: int) -> list[tuple[int, str]]:
    """``(pid, request path)`` of the running isolated children of ``parent`` (/proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"aliasfuzz.fuzz.isolated" in argv:
            out.append((int(d.name), argv[argv.index(b"aliasfuzz.fuzz.isolated") + 1].decode()))
    return out


def test_an_isolated_child_ends_with_its_folder_once_its_parent_is_killed():
    # fresh user 21: a child outlived its SIGTERM'd pytest (re-parented to init) and its
    # /tmp/aliasfuzz-isolated-* folder stayed; it now watches its parent as workers do
    if not Path("/proc").is_dir():
        pytest.skip("reads process states from /proc")
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "from aliasfuzz.fuzz.isolated import run_isolated; "
         "run_isolated('time:sleep', (300,), timeout=600)"],
        cwd=Path(__file__).parents[2],
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240  # two torch imports on a loaded box
        found = []
        while not found and time.monotonic() < deadline and parent.poll() is None:
            time.sleep(0.1)
            found = _children_isolated(parent.pid)
        assert found, "the isolated child never started"
        (child, request), = found
        folder = Path(request).parent
        assert folder.name.startswith("aliasfuzz-isolated-") and folder.is_dir()
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while (alive(child) or folder.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the isolated child outlived its killed parent"
    assert not folder.exists(), f"{folder} stayed behind"
