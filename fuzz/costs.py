"""Where a process's time goes: wall seconds per named stage, each second counted once.

Stages nest (:func:`stage`); time spent in an inner stage is not counted in the outer one,
so the stages of a process partition the time spent inside them and their shares add up.
A stage that learned afterwards how its own time divides (a pipeline's clock: trace /
compile / run) hands those seconds to finer stages with :func:`carve`. :func:`take`
returns the totals since the last call and starts over: a campaign worker takes them once
per task and sends them with the task's outcome (journaled per program and pipeline,
tabulated by :mod:`aliasfuzz.campaign.costs`).

Stage names are ``<part>`` or ``<part>.<sub>`` (``eager``, ``inductor.compile``,
``oracle.confirm``); the table of what each name covers is in
:data:`aliasfuzz.campaign.costs.STAGES`. Not thread-safe: one stack per process.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

__all__ = ["carve", "current", "stage", "take"]

_totals: dict[str, float] = {}
_stack: list[list] = []  # [name, perf_counter at which its current stretch began]


def _add(name: str, seconds: float) -> None:
    _totals[name] = _totals.get(name, 0.0) + seconds


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Count the wall time of the block under ``name`` (less the time of nested stages)."""
    now = time.perf_counter()
    if _stack:  # the outer stage pauses while this one runs
        _add(_stack[-1][0], now - _stack[-1][1])
    _stack.append([name, now])
    try:
        yield
    finally:
        now = time.perf_counter()
        done, began = _stack.pop()
        _add(done, now - began)
        if _stack:
            _stack[-1][1] = now


def current() -> str | None:
    """Name of the innermost open stage, or None outside every stage."""
    return _stack[-1][0] if _stack else None


def carve(name: str, seconds: float) -> None:
    """Move ``seconds`` of the innermost open stage's time to stage ``name`` (e.g. a
    pipeline's clock: its trace, compile and run spans lie inside the ``pipeline`` stage).
    Raises ``RuntimeError`` outside every stage."""
    if not _stack:
        raise RuntimeError("costs.carve outside a stage")
    if seconds > 0:
        _add(_stack[-1][0], -seconds)
        _add(name, seconds)


def take() -> dict[str, float]:
    """Seconds per stage since the last :func:`take` (stages still open count up to now)."""
    now = time.perf_counter()
    if _stack:  # only the innermost is running; the outer ones are paused
        _add(_stack[-1][0], now - _stack[-1][1])
        _stack[-1][1] = now
    out = {k: v for k, v in _totals.items() if v > 0}
    _totals.clear()
    return out
