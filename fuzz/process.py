"""Process state every entry point needs, and which side of the harness a process is on.

The lowest layer owns two things, so that every path that runs a program (each CLI
subcommand, the eager reference, the pipelines, campaign workers, the Python API) gets them
by itself and no result depends on what ran earlier in the process:

* :func:`setup`: idempotent process setup before PyTorch runs a program: the CPU Triton
  layer (:mod:`aliasfuzz.fuzz.triton_compat`: fake target for the mutation analysis, user
  kernels launched in Triton's interpreter) when triton is importable. The compile
  hygiene of :func:`aliasfuzz.passes.hygiene.setup_process` builds on it. Every run of a
  program enters :func:`system_under_test`, which calls it first.
* Attribution of a process's death: :func:`system_under_test` brackets each run of the
  system under test (the eager reference, a pipeline, PyTorch's own analyses the oracle
  calls), :func:`harness` brackets harness code that runs inside such a run (the oracle's
  callbacks from a pass). When the environment names a phase file (:data:`PHASE_ENV`, set
  by a campaign worker's parent), the current phase is written to its first
  :data:`PHASE_BYTES` bytes at each change (``sut: <what>`` or ``harness``), with one
  ``pwrite``: the bytes are in the kernel's page cache before the next instruction, so the
  parent reads them after any death, ``SIGKILL`` and ``SIGSEGV`` included
  (:func:`read_phase`). A death inside the system under test is a ``crash`` of PyTorch;
  anywhere else it is an internal error of aliasfuzz.

:func:`resolve` is the one way the harness looks up a PyTorch or Triton internal: it raises
:class:`HookNotFound`, naming the torch version, when the attribute moved.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "PARENT_ENV",
    "PHASE_BYTES",
    "PHASE_ENV",
    "TORCH_CHECKED",
    "HookNotFound",
    "harness",
    "parent_pid",
    "phase",
    "read_phase",
    "resolve",
    "setup",
    "system_under_test",
    "watch_parent",
]

#: The torch version whose internals the adapters were checked against.
TORCH_CHECKED = "2.13.0"

#: Environment variable naming the file a worker's phase is written to.
PHASE_ENV = "ALIASFUZZ_PHASE_FILE"
#: Bytes of the phase record (a label, space-padded).
PHASE_BYTES = 128
#: The pid of the process that started a child (a campaign driver its worker, a worker
#: its isolated step), given to the child in its environment (:func:`watch_parent`): read
#: at the child's start, getppid() may already be the reaper's.
PARENT_ENV = "ALIASFUZZ_PARENT_PID"

_SETUP_DONE = False
_stack: list[tuple[bool, str]] = []
_written: str | None = None
_fd: int | None = None


class HookNotFound(RuntimeError):
    """A PyTorch internal that an adapter hooks is missing (PyTorch moved or renamed it)."""


def resolve(module: str, name: str) -> Any:
    """``module.name`` (an attribute or a submodule), or :class:`HookNotFound`.

    The error names the running and the checked torch versions. Every hook looks its
    target up through here, so a PyTorch release that moves a pass fails loudly instead of
    silently skipping the capture.
    """
    try:
        mod = importlib.import_module(module)
        if not hasattr(mod, name):  # a submodule not imported yet
            return importlib.import_module(f"{module}.{name}")
        return getattr(mod, name)
    except (ImportError, AttributeError) as e:
        import torch

        raise HookNotFound(
            f"aliasfuzz hooks {module}.{name}, which is missing in torch {torch.__version__} "
            f"(adapters checked on torch {TORCH_CHECKED}; see passes/README.md): {e}"
        ) from e


def setup() -> None:
    """Set up this process for running programs; idempotent, cheap after the first call.

    Enables the CPU Triton layer (:func:`aliasfuzz.fuzz.triton_compat.enable`; on a GPU
    host only its traced-launch route). Raises :class:`HookNotFound` when a Triton or torch
    internal the layer patches is missing.
    """
    global _SETUP_DONE
    if _SETUP_DONE:
        return
    from aliasfuzz.fuzz import triton_compat

    triton_compat.enable()
    _SETUP_DONE = True


def phase() -> str:
    """This process's current phase: ``sut: <what>`` inside the system under test, else
    ``harness`` (or ``harness: <what>`` inside a :func:`harness` block)."""
    if not _stack:
        return "harness"
    sut, what = _stack[-1]
    return f"{'sut' if sut else 'harness'}: {what}"


def _publish() -> None:
    global _written, _fd
    path = os.environ.get(PHASE_ENV)
    label = phase()
    if not path or label == _written:
        return
    if _fd is None:
        _fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.pwrite(_fd, label.encode()[:PHASE_BYTES].ljust(PHASE_BYTES, b" "), 0)
    _written = label


@contextlib.contextmanager
def _span(sut: bool, what: str) -> Iterator[None]:
    _stack.append((sut, what))
    _publish()
    try:
        yield
    finally:
        _stack.pop()
        _publish()


def system_under_test(what: str) -> contextlib.AbstractContextManager[None]:
    """Context manager around one run of the system under test (``what``: e.g. ``eager``,
    ``pipeline aot_eager``); calls :func:`setup` first. Nests."""
    setup()
    return _span(True, what)


def harness(what: str) -> contextlib.AbstractContextManager[None]:
    """Context manager around harness code called from inside the system under test (the
    oracle's callbacks from a pass): a death there is aliasfuzz's, not PyTorch's. Nests."""
    return _span(False, what)


def read_phase(path: str | Path) -> str | None:
    """The phase a process last wrote to ``path`` (None: the file is missing or empty)."""
    try:
        data = Path(path).read_bytes()[:PHASE_BYTES]
    except OSError:
        return None
    text = data.decode(errors="replace").strip(" \0")
    return text or None


def watch_parent(parent: int, interval: float = 0.5,
                 cleanup: Callable[[], None] | None = None) -> None:
    """End this process, and its process group when it leads one (a campaign worker and an
    isolated step's child do: each is started in a session of its own, with Inductor's
    compile workers), once process ``parent`` is no longer its parent: the parent died
    (``kill -9``, a SIGTERM to pytest) and the child was re-parented. ``cleanup`` runs
    first (an isolated child removes its temporary folder, which its dead parent would
    have). Without this, a worker ran its task to the end (up to the per-task timeout)
    before it read the end of its input (fresh user 20's two orphans lived about 30 s),
    and an isolated child outlived a killed pytest with its folder (fresh user 21). Polled
    from a daemon thread (``PR_SET_PDEATHSIG`` would fire when the thread that started the
    child ends, and the driver and the blame start children from pool threads), so it
    works where ``prctl`` does not."""

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        if cleanup is not None:
            with contextlib.suppress(Exception):
                cleanup()
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=poll, name="aliasfuzz-parent-watch", daemon=True).start()


def parent_pid() -> int:
    """The pid of the process that started this one: :data:`PARENT_ENV` when set to a pid,
    else ``os.getppid()``."""
    parent = os.environ.get(PARENT_ENV, "")
    return int(parent) if parent.isdigit() else os.getppid()
