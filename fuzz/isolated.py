"""Run one step of the system under test in a fresh Python process, so a death stays there.

A compiled program that writes out of bounds corrupts the heap of the process that runs
it; glibc then aborts that process at some later ``free`` (``double free or corruption``,
``invalid fastbin entry``: the twelfth audit's 487f0339f2 and 0374cd4bda). When that
process is a campaign worker cutting a finding stage by stage, the death takes the whole
cut with it and the finding is filed unblamed. :func:`run_isolated` runs one step (a stage
of the cut, a control) in a child interpreter (``python -m aliasfuzz.fuzz.isolated``) and
brings back what it returned, or a :class:`Died` saying how the child ended.

Why a fresh interpreter and not ``os.fork``: GNU OpenMP (PyTorch's CPU thread pool) is not
fork-safe, so a forked child must run on one thread (on torch 2.13 an Inductor kernel
compiled in a forked child with two threads never returns), and 487f0339f2's
out-of-bounds write happens only with the parallel kernel: forked with one thread, its
stages agreed with eager three times out of three. A CUDA context cannot be used in a
forked child either. A fresh interpreter costs seconds (importing torch); only findings
whose cut kills a process pay it.

A step is a module-level function named ``"module:function"`` and arguments that pickle
(the IR program as JSON, options dataclasses). What crosses back: the step's return value
pickled by ``torch.save`` (tensors keep their strides and the storages they share), with
every exception held in a dataclass field replaced by a copy that keeps what the blame
reads of it: each exception of its ``__cause__`` / ``__context__`` chain as its type's name,
its message and the few innermost frames of PyTorch's own code it was raised from
(:func:`portable_error`, :func:`raise_frames`). Built-in exception types come back as
themselves, others as a subclass of ``RuntimeError`` of the same name.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from aliasfuzz.fuzz.process import PARENT_ENV, parent_pid, watch_parent

__all__ = ["HEAP_CORRUPTION", "Died", "exception_chain", "heap_check", "portable_error", "raise_frames",
           "run_isolated"]

#: Exit status of a child whose step raised in the harness (not a death of PyTorch).
_HARNESS_ERROR = 3

#: glibc's messages when malloc/free find the heap corrupted (the process then aborts);
#: ``malloc_printerr`` in glibc's ``malloc/malloc.c`` writes them to stderr.
HEAP_CORRUPTION = re.compile(
    r"corrupted (?:size vs\. prev_size|double-linked list|top size)[^\n]*|double free[^\n]*|"
    r"free\(\): [^\n]*|malloc\(\): [^\n]*|malloc_consolidate\(\): [^\n]*|"
    r"munmap_chunk\(\): [^\n]*|realloc\(\): [^\n]*"
)

#: What a process that aborts by itself prints first: glibc's heap messages, an uncaught
#: C++ exception (``std::terminate``), a failed C ``assert``, a fatal error of CPython's
#: own (not faulthandler's report of the signal, which it prints whoever sent it).
_ABORT_REASON = re.compile(
    HEAP_CORRUPTION.pattern + r"|terminate called[^\n]*|Assertion [^\n]* failed[^\n]*|"
    r"Fatal Python error: (?!Aborted)[^\n]*"
)

#: Signals a process gets from its own faulting instruction (the kernel sends them):
#: a death by one of them is the system under test's, whoever ran it.
_FAULTS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")

#: Signals a corrupted heap kills with: glibc's abort after its heap message, or a fault
#: on a corrupted pointer before glibc looks (:attr:`Died.heap`,
#: :func:`aliasfuzz.oracle.heap.may_be_corruption`).
HEAP_SIGNALS = ("SIGABRT", "SIGSEGV", "SIGBUS")

#: Bytes of a dead child's stderr kept in :attr:`Died.log`.
_LOG_TAIL = 8192


@dataclass(frozen=True)
class Died:
    """How an isolated step's child ended without an answer: ``how`` is ``signal SIGABRT``,
    ``exit 1`` or ``timeout after 600 s``; ``log``: the tail of the child's stderr (not
    compared: two deaths of the same kind are equal).

    A death by a signal is evidence against the system under test only when the process
    brought it on itself (:attr:`fault`): an outside ``kill`` (a user's, the OOM killer's
    SIGKILL, a test harness's SIGTERM) must never become a finding (the fresh user of the
    twelfth session forged a heap-corruption finding with ``kill -ABRT``)."""

    how: str
    log: str = field(default="", compare=False, repr=False)

    @property
    def signal(self) -> str | None:
        """The signal's name (``SIGABRT``) for a death by a signal, else None."""
        return self.how.removeprefix("signal ") if self.how.startswith("signal ") else None

    @property
    def fault(self) -> bool:
        """Whether the child brought its death on itself: a fault signal
        (:data:`_FAULTS`), or SIGABRT after the aborting code said why (glibc's heap
        message, ``terminate called``, a failed assertion). A SIGABRT with nothing before
        it, SIGKILL, SIGTERM and the like may have come from outside."""
        if self.signal in _FAULTS:
            return True
        return self.signal == "SIGABRT" and _ABORT_REASON.search(self.log) is not None

    @property
    def heap(self) -> str | None:
        """What shows heap corruption in this death, or None: glibc's message before a
        SIGABRT, or a SIGSEGV/SIGBUS (a corrupted pointer faults before glibc looks)."""
        if self.signal == "SIGABRT":
            found = HEAP_CORRUPTION.search(self.log)
            return found.group(0).strip() if found else None
        return self.signal if self.signal in HEAP_SIGNALS else None


@dataclass(frozen=True)
class _Chain:
    """An exception chain as data (pickle drops ``__cause__``, ``__context__`` and
    ``__traceback__``): ``(type name, message, args, frames)`` from the outermost exception
    inward, ``frames`` as :func:`raise_frames` gives them."""

    links: tuple[tuple[str, str, tuple, tuple[str, ...]], ...]


def portable_error(e: BaseException) -> BaseException:
    """A copy of exception ``e`` and its ``__cause__``/``__context__`` chain (and a
    wrapper's ``inner_exception``: :func:`exception_chain`) built from type
    names, messages and raise sites only: built-in types kept, others rebuilt as
    ``RuntimeError`` subclasses of the same name (the blame reads names and messages,
    :func:`aliasfuzz.oracle.blame._same_error`, and where in PyTorch an Inductor crash was
    raised, :func:`raise_frames`)."""
    return _rebuild(_chain(e))


#: Frames of PyTorch's own code kept per exception by :func:`raise_frames` (the innermost).
_FRAMES = 8
#: The attribute of a rebuilt exception that holds the frames its original was raised from.
_FRAMES_ATTR = "_aliasfuzz_frames"


def _short_path(filename: str) -> str | None:
    """``torch/_inductor/scheduler.py`` for a file of the ``torch`` package, wherever it is
    installed (``.../site-packages/torch/...`` or a source checkout's ``.../torch/...``);
    None for any other file (Python's own, sympy, aliasfuzz)."""
    path = filename.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            path = path.rsplit(marker, 1)[1]
            return path if path.startswith("torch/") else None
    at = path.rfind("/torch/")
    return path[at + 1:] if at >= 0 else None


def raise_frames(e: BaseException, most: int | None = _FRAMES) -> tuple[str, ...]:
    """Where in PyTorch ``e`` itself (not its chain) was raised: the innermost ``most``
    (:data:`_FRAMES`; None: all) frames of its traceback that run code of the ``torch``
    package, outermost first, each as ``torch/<path>.py:<function>``
    (``torch/_inductor/scheduler.py:compute_ancestors``). A copy made by
    :func:`portable_error` in a child interpreter has no traceback; it answers the
    :data:`_FRAMES` frames its original had. ``()`` when none is known.

    Why only PyTorch's frames and only a few: the blame names the component of Inductor
    (:func:`aliasfuzz.passes.stages.inductor_component`) that raised a crash of its full
    compile (audit 22 88f92dc7f4: a ``KeyError`` of ``Scheduler.compute_ancestors`` was
    filed as ``lowering``), and a copy crosses the process boundary small."""
    if e.__traceback__ is None:
        return tuple(getattr(e, _FRAMES_ATTR, ()))
    frames: list[str] = []
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        short = _short_path(code.co_filename)
        if short is not None:
            frames.append(f"{short}:{code.co_name}")
        tb = tb.tb_next
    return tuple(frames if most is None else frames[-most:])


def exception_chain(e: BaseException) -> list[BaseException]:
    """``e`` and the exceptions behind it, outermost first: ``__cause__``, ``__context__``
    unless suppressed, and a wrapper's ``inner_exception`` (Dynamo raises
    ``BackendCompilerFailed`` ``from None`` in ``OutputGraph.call_user_compiler``,
    torch/_dynamo/output_graph.py, so the backend's own error is chained only there: CI 53's
    cut of a zero-size ``view(float16)`` raised it for backend ``'recorded'``, the pipeline
    for ``'backend'``). A cycle ends the walk."""
    links: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and all(cur is not x for x in links):
        links.append(cur)
        inner = getattr(cur, "inner_exception", None)
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
        if cur is None and isinstance(inner, BaseException):
            cur = inner
    return links


def _chain(e: BaseException) -> _Chain:
    return _Chain(tuple((type(x).__name__, str(x), _args(x), raise_frames(x))
                        for x in exception_chain(e)))


def _args(x: BaseException) -> tuple:
    """``x.args`` when they are plain values (so the copy prints as ``x`` does: KeyError
    quotes its argument), else its message alone."""
    plain = all(isinstance(a, str | int | float | bool | type(None)) for a in x.args)
    return tuple(x.args) if plain else (str(x),)


def _rebuild(chain: _Chain) -> BaseException:
    out: BaseException | None = None
    for name, message, args, frames in reversed(chain.links):
        kind = getattr(builtins, name, None)
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            kind = _named(name)
        try:
            copy = kind(*args)
        except Exception:  # a type whose constructor wants other arguments
            copy = None
        if copy is None or str(copy) != message:
            copy = _named(name)(message)
        setattr(copy, _FRAMES_ATTR, frames)
        copy.__cause__ = out
        out = copy
    assert out is not None
    return out


_NAMED: dict[str, type] = {}


def _named(name: str) -> type:
    if name not in _NAMED:
        _NAMED[name] = type(name, (RuntimeError,), {"__module__": __name__})
    return _NAMED[name]


def _walk(value: Any, leaf: type, convert: Any) -> Any:
    """``value`` with every ``leaf`` (held in lists, tuples and dataclass fields) replaced
    by ``convert(leaf)``; everything else as is."""
    if isinstance(value, leaf):
        return convert(value)
    if isinstance(value, list | tuple):
        return type(value)(_walk(v, leaf, convert) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: _walk(getattr(value, f.name), leaf, convert) for f in fields(value)
                   if isinstance(getattr(value, f.name), leaf | list | tuple)
                   or is_dataclass(getattr(value, f.name))}
        return replace(value, **changed) if changed else value
    return value


def heap_check(collect: bool = True) -> None:
    """Make glibc look at the heap now: collect garbage (``collect``: frees what the step
    left in reference cycles), then
    ``malloc_trim(0)``, which consolidates every arena's free chunks and aborts the process
    (``malloc_consolidate(): invalid chunk size`` and the like) when an out-of-bounds write
    has corrupted a chunk header. glibc otherwise notices only at some later
    ``malloc``/``free``, often in another run. Before the trim, eight chunks of every
    small size class are taken and given back (a corrupted cached chunk aborts ``malloc``:
    ``malloc(): unaligned tcache chunk detected``). Best effort: corruption of memory no
    later call looks at stays unseen. A no-op where glibc is not the C library."""
    import ctypes
    import gc

    if collect:  # ~100 ms in a process that imported torch: campaign workers skip it
        gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc.restype = ctypes.c_void_p
        libc.free.argtypes = [ctypes.c_void_p]
        # take every small size class's cached chunks out and back (a corrupted tcache or
        # fastbin entry aborts malloc), then consolidate the arenas
        for size in range(16, 2064, 16):
            chunks = [libc.malloc(size) for _ in range(8)]
            for c in chunks:
                libc.free(c)
        libc.malloc_trim(0)


def run_isolated(target: str, args: tuple = (), *, timeout: float = 600.0,
                 check_heap: bool = False) -> Any:
    """Run ``target(*args)`` (``target``: ``"module:function"``) in a fresh interpreter and
    return what it returned (see the module docstring for what crosses back), or a
    :class:`Died` when the child was killed by a signal, exited without an answer, or ran
    past ``timeout`` seconds (then its process group is killed), with the tail of the
    child's stderr (kept out of the caller's log, which the campaign's death attribution
    reads: a child's glibc message there would be taken for the worker's). ``check_heap``: the child
    runs :func:`heap_check` after the step and before answering, so that a step that
    corrupted the heap dies (a signal) instead of answering.

    Raises RuntimeError carrying the child's traceback when the step itself raised (a bug
    of the harness: steps return PyTorch's failures as data)."""
    import torch

    with tempfile.TemporaryDirectory(prefix="aliasfuzz-isolated-") as tmp:
        request, answer = os.path.join(tmp, "request.pt"), os.path.join(tmp, "answer.pt")
        torch.save((target, args, check_heap), request)
        env = {k: v for k, v in os.environ.items() if k != "ALIASFUZZ_PHASE_FILE"}
        # the child ends itself, and removes this folder, when this process is gone (a
        # campaign worker's own PARENT_ENV names the driver: replaced by this pid)
        env[PARENT_ENV] = str(os.getpid())
        stderr = os.path.join(tmp, "stderr")
        with open(stderr, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", __name__, request, answer],
                                    env=env, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=err)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                code = None
            except BaseException:  # Ctrl-C, a SystemExit from a signal handler: no orphan
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
        log = _log_of(stderr)
        if code is None:
            return Died(f"timeout after {timeout:g} s", log)
        if code < 0:
            return Died(f"signal {signal.Signals(-code).name}", log)
        if code == _HARNESS_ERROR and os.path.exists(answer + ".err"):
            with open(answer + ".err") as f:
                raise RuntimeError(f"an isolated step raised in the harness:\n{f.read()}")
        if code != 0 or not os.path.exists(answer):
            return Died(f"exit {code}", log)
        return _walk(torch.load(answer, weights_only=False), _Chain, _rebuild)


def _log_of(path: str) -> str:
    """The last :data:`_LOG_TAIL` characters of a dead child's stderr at ``path``, behind
    the first line that says why it aborted (:data:`_ABORT_REASON`) when that line is
    further back: faulthandler's dump of every thread after glibc's heap message can
    outgrow the tail, and an abort without its reason reads as a kill from outside."""
    with open(path, "rb") as f:
        text = f.read().decode(errors="replace")
    tail = text[-_LOG_TAIL:]
    reason = _ABORT_REASON.search(text)
    if reason is not None and reason.start() < len(text) - len(tail):
        return f"{reason.group(0)}\n[...]\n{tail}"
    return tail


def _main(request: str, answer: str) -> None:
    """The child's side: never returns (``os._exit``: no atexit handler and no ``free`` of
    a corrupted heap once the answer is written)."""
    code = 0
    try:
        import torch

        from aliasfuzz.passes import hygiene

        hygiene.setup_process()
        target, args, check_heap = torch.load(request, weights_only=False)
        module, name = target.split(":")
        value = getattr(importlib.import_module(module), name)(*args)
        if check_heap:
            heap_check()
        torch.save(_walk(value, BaseException, _chain), answer)
    except BaseException:
        with contextlib.suppress(Exception), open(answer + ".err", "w") as f:
            f.write(traceback.format_exc())
        code = _HARNESS_ERROR
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _watch(request: str) -> None:
    """End this child, its process group and its temporary folder (the one holding
    ``request``, which the parent's ``TemporaryDirectory`` would have removed) once the
    parent that started it is gone: fresh user 21's child outlived a SIGTERM'd pytest with
    its ``/tmp/aliasfuzz-isolated-*`` folder. Started before torch is imported (seconds)."""
    folder = os.path.dirname(os.path.abspath(request))

    def cleanup() -> None:
        # only a folder run_isolated made: a hand-run child's request may sit anywhere
        if os.path.basename(folder).startswith("aliasfuzz-isolated-"):
            shutil.rmtree(folder, ignore_errors=True)

    watch_parent(parent_pid(), cleanup=cleanup)


if __name__ == "__main__":  # run as the module itself, so that _Chain pickles by its name
    from aliasfuzz.fuzz import isolated

    isolated._watch(sys.argv[1])
    isolated._main(sys.argv[1], sys.argv[2])
