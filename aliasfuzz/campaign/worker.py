"""Isolated workers: the system under test runs in child processes, never in the driver.

A worker is ``python -m aliasfuzz.campaign.worker``: it reads one JSON task per line on
stdin (one program under one pipeline, or under several Dynamo-fronted ``pipelines`` from
one Dynamo capture: :func:`aliasfuzz.campaign._judge.evaluate_group`) and answers one JSON
line per task, with the seconds per stage it spent (``costs``), on a private copy of its stdout (the real fd 1 is
pointed at stderr, so prints from torch cannot corrupt the protocol; stderr goes to a log
file in the campaign directory). Each worker gets its own ``ALIASFUZZ_WORKDIR`` and its own
``TORCHINDUCTOR_CACHE_DIR`` unless the pool passes a shared one
(:func:`aliasfuzz.campaign.pool.kernel_cache_dir`).

:class:`Worker` turns the ways a child can fail into outcomes. A death by a signal or a
non-zero exit while a task is in flight is attributed by where it happened
(:func:`attribute_death`): the child writes its phase to a small file
(:mod:`aliasfuzz.fuzz.process`: ``sut: <what>`` while the eager reference, a pipeline or
PyTorch's own analysis runs, ``harness`` in the oracle, the generator and this loop), which
the parent reads after the death, next to faulthandler's stack in the log. A death inside
the system under test is ``crash`` (check ``signal:SIGSEGV`` or ``exit:N``); elsewhere it is
an internal error of aliasfuzz (``{"internal_error": ..., "summary": ...}``), never a
finding. No answer within the per-task timeout is ``timeout`` (the child is killed); then
a fresh child takes over. Workers are also replaced every ``recycle`` tasks to bound
memory growth (``shared/notes/pytorch-seams.md`` §5: RSS grows 0.1-0.3 MB per program).

A CUDA error that poisons the context (an illegal address, a device-side assert: CUDA
keeps such errors "sticky", every later call in the process fails) would turn every later
task of the child into a bogus failure. After each task on a CUDA device the child probes
the context (:func:`device_fault`); when it is poisoned the task's verdict becomes ``crash``
(check ``cuda-error``), the answer carries ``"restart": true`` and the child exits, so the
next task gets a fresh process and a fresh context.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from aliasfuzz.fuzz.isolated import HEAP_CORRUPTION
from aliasfuzz.fuzz.process import (
    PARENT_ENV,
    PHASE_BYTES,
    PHASE_ENV,
    parent_pid,
    read_phase,
    watch_parent,  # re-exported: the worker's watch on its driver
)

__all__ = ["ABANDONED", "Worker", "attribute_death", "main", "watch_parent"]


#: Starts of a worker child killed by a signal before it was ready (:meth:`Worker._start`).
_START_TRIES = 3


class _KilledStarting(RuntimeError):
    """A worker child killed by a signal before it answered ``ready``."""


class _Abandoned(RuntimeError):
    """A child asked of a worker after :meth:`Worker.abandon`: none is started."""


#: The outcome :meth:`Worker.run` gives once its worker is abandoned (the campaign was
#: interrupted): the task was not judged. The driver journals nothing of an abandoned
#: pool, so ``--resume`` runs the task again; ``check`` is an outside signal's so that
#: anything that looked would take it for an unjudged task, never a verdict.
ABANDONED = {"internal_error": "abandoned: the campaign was interrupted",
             "summary": "abandoned: the campaign was interrupted; the task was not judged",
             "check": "signal:SIGKILL"}


#: Bytes of a task's worker log kept with a death (faulthandler dumps every thread's stack),
#: and of a log without a dump kept as a crash's ``diff``.
_DEATH_TAIL = 12000
_CRASH_TAIL = 1500


class Worker:
    """One child process; :meth:`run` sends a task and returns its outcome dict.

    ``root`` is a directory for this worker's caches and log. The outcome of a task that
    killed or hung the child is synthesized here (``crash`` / ``timeout``). A task that
    raised inside the harness comes back as ``{"internal_error": traceback}``.
    """

    def __init__(
        self,
        root: Path,
        *,
        timeout: float,
        recycle: int,
        device: str = "cpu",
        env: dict[str, str] | None = None,
    ):
        self.root = Path(root)
        self.env = dict(env or {})
        self.timeout = timeout
        self.recycle = recycle
        self.device = device
        self.proc: subprocess.Popen | None = None
        self.done = 0
        self.started = 0
        #: wall seconds spent starting children (torch import until "ready"), all told
        self.start_seconds = 0.0
        #: set by :meth:`abandon` (another thread): no child starts any more
        self.abandoned = False
        self._pipeline: str | None = None  # the task's, when a death is attributed

    # -- process management ------------------------------------------------------------
    def _start(self) -> None:
        """Start the child; one killed by a signal before it was ready (a user's ``kill``,
        the OOM killer during torch's import) is started again, up to
        :data:`_START_TRIES` times. Raises RuntimeError when it cannot start (an import
        error: a harness bug) or was killed every time."""
        t0 = time.perf_counter()
        try:
            for attempt in range(1, _START_TRIES + 1):
                if self.abandoned:
                    raise _Abandoned
                try:
                    self._spawn()
                    return
                except _KilledStarting:
                    if self.abandoned:
                        raise _Abandoned from None
                    if attempt == _START_TRIES:
                        raise
        finally:
            self.start_seconds += time.perf_counter() - t0

    def _spawn(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env["TORCHINDUCTOR_CACHE_DIR"] = str(self.root / "inductor-cache")
        env["ALIASFUZZ_WORKDIR"] = str(self.root / "src")
        env["PYTHONFAULTHANDLER"] = "1"
        env[PARENT_ENV] = str(os.getpid())  # the child ends itself when this process is gone
        # where the child is (inside the system under test or in aliasfuzz): read at a death
        # (the child rewrites it at each change; until its first one it is in aliasfuzz)
        self.phase_file = self.root / "phase"
        self.phase_file.write_bytes(b"harness".ljust(PHASE_BYTES))
        env[PHASE_ENV] = str(self.phase_file)
        # Triton's kernel cache is keyed by kernel source, target and compile options, so
        # sibling workers may share it (small random programs repeat pointwise kernels);
        # Inductor's graph-level caches, which would hide the passes, stay off (hygiene).
        env.setdefault("TRITON_CACHE_DIR", str(self.root.parent / "triton-cache"))
        env.update(self.env)
        self.log = open(self.root / "worker.log", "ab")  # noqa: SIM115 - lives with the child
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "aliasfuzz.campaign.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
            start_new_session=True,  # a kill of the process group takes compile workers too
        )
        if self.abandoned:  # abandon() ran while it was being started: it found no child
            self._kill(self.proc)
        self.done = 0
        self.started += 1
        # The child answers {"ready": true} once torch and the harness are imported, so
        # import time never counts against a task's timeout; a child that cannot start is
        # a harness bug (e.g. an import error), raised, not a verdict.
        line = self._readline(300.0)
        if not line or b'"ready"' not in line:
            tail = self._log_tail()
            try:  # None: alive but silent (hung), killed by _reap below
                died = self.proc.wait(timeout=5) if line == b"" else self.proc.poll()
            except subprocess.TimeoutExpired:
                died = None
            rc = self._reap(polite=False)
            if died is not None and rc < 0:
                raise _KilledStarting(f"aliasfuzz worker was killed while starting "
                                      f"({signal.Signals(-rc).name}), {_START_TRIES} times:\n{tail}")
            raise RuntimeError(f"aliasfuzz worker failed to start:\n{tail}")

    def close(self) -> None:
        """Stop the child (end of input, then by force after 5 s) and close its pipes and log."""
        if self.proc is not None:
            self._reap(polite=True)

    def abandon(self) -> None:
        """Give up the task in flight, from another thread than the one in :meth:`run`:
        kill the child's process group now (its compile workers too) and start no other
        child; :meth:`run` then answers :data:`ABANDONED` at once. For an interrupted
        campaign (SIGTERM, Ctrl-C), which would otherwise wait for an in-flight compile,
        about 40 s on a loaded 2-core box (fresh user 22)."""
        self.abandoned = True
        p = self.proc
        if p is not None:
            self._kill(p)

    @staticmethod
    def _kill(p: subprocess.Popen) -> None:
        """SIGKILL child ``p``'s process group unless ``p`` was already reaped (its pid,
        the group's id, could then be another process's)."""
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _reap(self, *, polite: bool) -> int:
        """Detach the child: wait for it (killing its process group unless ``polite`` and it
        exits within 5 s), close every pipe and the log; return its exit status."""
        p, self.proc = self.proc, None
        if polite:
            try:
                p.stdin.close()
                return self._finish(p, p.wait(timeout=5))
            except (OSError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return self._finish(p, p.wait())

    def _finish(self, p: subprocess.Popen, rc: int) -> int:
        for f in (p.stdin, p.stdout):
            try:
                f.close()
            except OSError:  # a broken pipe to a dead child
                pass
        self.log.close()
        return rc

    def _log_tail(self, n: int = 1500, since: int = 0) -> str:
        """The last ``n`` bytes of the worker log written after offset ``since``."""
        self.log.flush()
        try:
            data = (self.root / "worker.log").read_bytes()
        except OSError:
            return ""
        return data[max(since, len(data) - n) :].decode(errors="replace")

    # -- one task ----------------------------------------------------------------------
    def run(self, task: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Run ``task`` (``program`` JSON, ``pipeline``, ``device``, ``options``; or
        ``pipelines`` and ``options`` per pipeline: answered ``{"outcomes": {pipeline:
        outcome}}``), within ``timeout`` seconds (default: the worker's)."""
        timeout = self.timeout if timeout is None else timeout
        if self.abandoned:
            return dict(ABANDONED)
        if self.proc is None or self.done >= self.recycle:
            self.close()
            try:
                self._start()
            except _Abandoned:
                return dict(ABANDONED)
        assert self.proc is not None
        self.done += 1
        self._task_log = (self.root / "worker.log").stat().st_size  # this task's log from here
        # a one-pipeline judgement's: whose death is it (a cut's death is re-run isolated:
        # pool.blame_in)
        self._pipeline = None if "blame" in task else task.get("pipeline")
        try:
            self.proc.stdin.write((json.dumps(task) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            if self.abandoned:
                self._reap(polite=False)
                return dict(ABANDONED)
            return self._died(time.perf_counter())
        t0 = time.perf_counter()
        line = self._readline(timeout)
        if self.abandoned:  # killed by abandon(): no verdict of this task (not a crash)
            self._reap(polite=False)
            return dict(ABANDONED)
        if line is None:  # hang
            self._reap(polite=False)
            return {
                "verdict": "timeout",
                "check": "timeout",
                "seconds": time.perf_counter() - t0,
                "explanation": f"no answer within {timeout:g} s; worker killed",
            }
        if line == b"":
            return self._died(t0)
        out = json.loads(line)
        if out.pop("restart", False):  # the child exits by itself: its CUDA context is gone
            self._reap(polite=True)
        return out

    def _readline(self, timeout: float) -> bytes | None:
        """A line from the child, b"" at EOF, None after ``timeout`` seconds."""
        out = self.proc.stdout
        sel = selectors.DefaultSelector()
        sel.register(out, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        buf = b""
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(out.fileno(), 65536)
                if not chunk:
                    return b""
                buf += chunk
                if buf.endswith(b"\n"):
                    return buf
        finally:
            sel.close()

    def _died(self, t0: float) -> dict[str, Any]:
        self.proc.wait()
        log = self._log_tail(_DEATH_TAIL, since=getattr(self, "_task_log", 0))
        rc = self._reap(polite=False)
        if rc < 0:
            try:
                check = f"signal:{signal.Signals(-rc).name}"
            except ValueError:
                check = f"signal:{-rc}"
        else:
            check = f"exit:{rc}"
        return attribute_death(check, read_phase(self.phase_file), log, time.perf_counter() - t0,
                               pipeline=self._pipeline)


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)', re.M)


def _oracle_dir() -> str | None:
    spec = importlib.util.find_spec("aliasfuzz.oracle")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return str(Path(locations[0]).resolve()) if locations else None


def innermost_frame(log: str) -> tuple[str, int, str] | None:
    """``(file, line, function)`` of the innermost Python frame of the thread that died, from
    faulthandler's dump in ``log`` (``Current thread ... (most recent call first):``, or
    ``Fatal Python error`` / the first stack), or None when there is no dump."""
    start = max(log.rfind("Fatal Python error"), 0)
    head = log.find("Current thread", start)
    m = _FRAME.search(log, head if head >= 0 else start)
    return (m["file"], int(m["line"]), m["func"]) if m else None


def _dump(log: str) -> str:
    """faulthandler's dump in ``log`` (from its last ``Fatal Python error``), without the list
    of extension modules; else the log's last :data:`_CRASH_TAIL` bytes."""
    at = log.rfind("Fatal Python error")
    if at < 0:
        return log[-_CRASH_TAIL:]
    return re.sub(r"\nExtension modules: [^\n]*", "", log[at:]).strip()


#: Worker deaths no process brings on itself: the OOM killer, a user, a job scheduler.
#: In aliasfuzz's own code such a death is an internal error the campaign re-runs once
#: (:func:`aliasfuzz.campaign.driver.needs_confirmation`).
OUTSIDE_SIGNALS = ("signal:SIGKILL", "signal:SIGTERM", "signal:SIGINT", "signal:SIGHUP")


def attribute_death(check: str, phase: str | None, log: str, seconds: float, *,
                    pipeline: str | None = None) -> dict[str, Any]:
    """The outcome of a task whose worker died (``check``: ``signal:NAME`` or ``exit:N``).

    ``phase`` is what the worker last wrote to its phase file
    (:func:`aliasfuzz.fuzz.process.read_phase`), ``log`` the worker's log during the task.
    Inside the system under test (``sut: ...``) the death is a ``crash`` of PyTorch (with
    faulthandler's stack as ``diff``), unless the innermost frame of the dying thread is in
    aliasfuzz's oracle (its code called from inside a pass). Anywhere else (the oracle,
    the generator, the worker loop) it is an internal error of aliasfuzz, never a finding:
    ``{"internal_error": text with the stacks, "summary": one line, "check"}``. Without a
    phase (no file) the death counts as a crash, as before phases existed.

    ``pipeline``: the task's own pipeline (a one-pipeline task). A death while another
    pipeline ran (``sut: pipeline inductor`` in an ``inductor-reinplace`` task: the oracle's
    cost gate or the fast path's full re-judge compile full Inductor) is that pipeline's
    crash, which its own task judges, not this task's: the verdict is ``unknown``, saying
    so (fresh user 39's B1: a heap corruption of full Inductor's out-of-bounds write, known
    as crash-lowering-5fcbc5cdc0 on ``inductor``, was filed as a new ``inductor-reinplace``
    crash whose repro, running the fast path, exited 0).
    """
    frame = innermost_frame(log)
    oracle = _oracle_dir()
    in_oracle = bool(
        frame and oracle and str(Path(frame[0]).resolve()).startswith(oracle + os.sep)
    )
    where = phase or "sut: unknown"
    heap = HEAP_CORRUPTION.search(log)
    if where.startswith("sut") and not in_oracle:
        # glibc's message names memory corruption: an out-of-bounds write, worse than a
        # wrong value (tenth audit wave G), and what a maintainer looks for first
        corrupt = (f": glibc found the heap corrupted ({heap.group(0).strip()!r}), "
                   "an out-of-bounds write" if heap else "")
        ran = where.partition(": ")[2]
        other = ran.removeprefix("pipeline ") if ran.startswith("pipeline ") else None
        if pipeline and other and other != pipeline:
            return {
                "verdict": "unknown",
                "check": check,
                "seconds": seconds,
                "explanation": f"worker died ({check}) while the oracle ran pipeline {other} "
                f"for this {pipeline} task (its cost gate or a full re-judge){corrupt}: "
                f"a crash of {other}, which {other}'s own task judges, not of {pipeline}",
                "diff": _dump(log),
            }
        return {
            "verdict": "crash",
            "check": check,
            "seconds": seconds,
            "explanation": f"worker died ({check}) while running the program "
            f"(in the system under test: {where.partition(': ')[2]}){corrupt}",
            "diff": _dump(log),
        }
    at = f"; innermost frame {Path(frame[0]).name}:{frame[1]} in {frame[2]}" if frame else ""
    summary = f"worker died ({check}) in aliasfuzz ({where}{at}), not in the system under test"
    if check in OUTSIDE_SIGNALS:
        # no process sends itself these: the OOM killer, a user, a job scheduler did
        summary = (f"worker killed from outside ({check}: the OOM killer, a user or a job "
                   f"scheduler) while aliasfuzz ran ({where}{at}); the task was not judged")
    elif heap:
        # glibc notices a corrupted heap at a later malloc/free, wherever that happens:
        # the write that corrupted it came earlier in the process, most likely from a
        # compiled kernel or an eager op writing out of bounds. Still not a finding
        # (nothing shows which run wrote), but the summary must not blame aliasfuzz.
        summary = (
            f"worker died ({check}): glibc found the heap corrupted ({heap.group(0)!r}) "
            f"while aliasfuzz ran ({where}{at}); the corrupting write came earlier in the "
            "process, most likely from the system under test (an out-of-bounds write)"
        )
    return {
        "internal_error": f"{summary}\nworker log of the task (faulthandler's stacks):\n{log}",
        "summary": summary,
        "check": check,
        "seconds": seconds,
    }


def device_fault(device: str) -> str | None:
    """The sticky CUDA error poisoning this process's context, or None when it is usable.

    Probes with a synchronize and a tiny kernel: after an illegal address or a device-side
    assert both raise (``torch.AcceleratorError`` on torch >= 2.8; CUDA reports the error
    again on every later call). Non-sticky errors (out of memory, a bad launch
    configuration) leave the context usable and are the pipeline's own verdict. Never
    initializes CUDA: a process that did not touch the device has nothing to probe. A CPU
    task is probed too when it touched the device (on a GPU host the other-device opinion,
    ``oracle/opinions.py``, reruns CPU programs on CUDA; H200: a device-side assert in a
    ``cpu`` task came back as an internal error and the poisoned worker lived on). The
    debug pipeline ``debug-cuda-fault`` simulates a fault on machines without a GPU.
    """
    from aliasfuzz.campaign import _debug
    from aliasfuzz.errors import one_line

    if _debug.simulated_fault is not None:
        return _debug.simulated_fault
    import torch

    if not torch.cuda.is_initialized():
        return None
    try:
        torch.cuda.synchronize()
        torch.ones(1, device=device if device.startswith("cuda") else "cuda").add_(1).item()
    except Exception as e:  # noqa: BLE001 - any failure here means the context is unusable
        return one_line(e)
    return None


def _cuda_crash(out: dict[str, Any], fault: str) -> dict[str, Any]:
    """``out`` turned into the ``crash`` verdict of a poisoned CUDA context."""
    before = out.get("internal_error") or out.get("explanation", "")
    return {
        "verdict": "crash",
        "check": "cuda-error",
        "explanation": f"CUDA context poisoned while running the program ({fault}); "
        "worker restarted",
        "diff": f"outcome before the probe ({out.get('verdict', 'exception')}):\n{before}",
        "decisions": out.get("decisions", []),
        "decision_kinds": out.get("decision_kinds", []),
        "restart": True,
    }


def _serve(proto) -> None:
    import traceback

    import torch  # noqa: F401 - imported before "ready"

    from aliasfuzz.campaign import _judge
    from aliasfuzz.fuzz import costs, process
    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.fuzz.isolated import heap_check
    from aliasfuzz.plugins import load_from_env

    process.setup()  # before "ready": its cost never counts against a task's timeout
    load_from_env()  # pass plugins (ALIASFUZZ_PLUGINS) before any program runs
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        costs.take()  # this task's costs only
        with costs.stage("worker"):  # what no finer stage claims: decoding, encoding, probing
            task = json.loads(line)
            try:
                program = Program.from_json(task["program"])
                if "blame" in task:  # the finding's outcome: cut its pipeline stage by stage
                    out = {"blame": _judge.blame(program, task["pipeline"], task["device"],
                                                 task.get("options"), task["blame"],
                                                 full=task.get("full", True),
                                                 isolate=task.get("isolate", False))}
                elif "pipelines" in task:  # a program's pipelines, one Dynamo capture shared
                    out = {"outcomes": _judge.evaluate_group(
                        program, task["pipelines"], task["device"], task.get("options")
                    )}
                else:
                    out = _judge.evaluate(
                        program, task["pipeline"], task["device"], task.get("options")
                    )
                if "blame" not in task:
                    # glibc notices an out-of-bounds write only at a later malloc or free,
                    # often in the next task's harness code: look now, still inside the
                    # system under test (a death here is a heap death, oracle.heap)
                    what = task.get("pipeline") or ",".join(task["pipelines"])
                    with process.system_under_test(f"heap check after {what}"):
                        heap_check(collect=False)
            except Exception:  # an internal bug: reported to the driver, which shows it loudly
                out = {"internal_error": traceback.format_exc()}
            fault = device_fault(task.get("device", "cpu"))
            if fault is not None:
                out = _cuda_crash(out, fault)
        out["costs"] = costs.take()  # seconds per stage (aliasfuzz.campaign.costs)
        proto.write(json.dumps(out) + "\n")
        proto.flush()
        if fault is not None:
            os._exit(0)  # no CUDA teardown: a poisoned context can hang on it


def main() -> None:
    """Worker entry point: keep a private protocol stream, send fd 1 to stderr."""
    # the pid of the driver that started this worker, not getppid() now: it may be gone
    watch_parent(parent_pid())
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _serve(proto)


if __name__ == "__main__":
    main()
