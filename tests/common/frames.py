"""Exceptions raised through code that says it lives in PyTorch's files (fake frames), for
the tests of where a crash was raised (``fuzz.isolated.raise_frames``,
``passes.stages.inductor_component``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

#: Where a virtual environment installs torch (the prefix ``raise_frames`` cuts off).
SITE = "/venv/lib/python3.11/site-packages/"


def raised_through(frames: Sequence[tuple[str, str]], error: BaseException) -> Callable[[], None]:
    """A callable that raises ``error`` through functions whose code objects carry the given
    ``(file, function)`` pairs, outermost first (a traceback then shows those frames)."""
    def call() -> None:
        raise error

    for filename, name in reversed(frames):
        ns: dict = {}
        exec(compile(f"def {name}(k):\n    return k()\n", filename, "exec"), ns)
        call = functools.partial(ns[name], call)
    return call


def caught(frames: Sequence[tuple[str, str]], error: BaseException) -> BaseException:
    """``error`` after it was raised through ``frames`` (:func:`raised_through`)."""
    try:
        raised_through(frames, error)()
    except BaseException as e:  # noqa: BLE001 - the test wants it back whatever it is
        return e
    raise AssertionError("not raised")
