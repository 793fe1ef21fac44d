"""The one place that patches Inductor's reinplace pass to observe its decisions.

``torch._inductor.fx_passes.post_grad.post_grad_passes`` looks its
``reinplace_inplaceable_ops`` global up at call time, and that function looks up
``reinplace_inplaceable_ops_core`` in ``torch._inductor.fx_passes.reinplace`` at call
time (torch 2.13.0). :func:`reinplace_spy` replaces both for the duration of a ``with``
block: the graph is captured *at* the pass (after ``reorder_for_locality`` and the pattern
passes, which change what the pass decides; ``shared/notes/pytorch-seams.md`` §1) and
each call yields one :class:`~aliasfuzz.passes.decisions.InductorCapture`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from aliasfuzz.passes.decisions import InductorCapture
from aliasfuzz.passes.hygiene import resolve

__all__ = ["SpyLog", "reinplace_spy"]

_ACTIVE = False


class SpyLog:
    """What the spy saw: one capture per pass call, and the first internal error.

    Torch wraps exceptions raised inside its compiler (``InductorError``), so an error of
    our own capture code is also kept here for the adapter to re-raise: internal bugs are
    never recorded as failures of the system under test.
    """

    def __init__(self) -> None:
        self.captures: list[InductorCapture] = []
        self.internal_error: BaseException | None = None

    def check(self) -> None:
        """Re-raise the capture's own error, if any."""
        if self.internal_error is not None:
            raise self.internal_error


def _counter_values() -> dict[str, int]:
    return dict(resolve("torch._dynamo.utils", "ReinplaceCounters")._values)


@contextmanager
def reinplace_spy() -> Iterator[SpyLog]:
    """Record every call of Inductor's reinplace pass inside the block.

    Yields a :class:`SpyLog` (one capture per compiled graph); each capture's
    ``counters`` holds what the pass added to ``ReinplaceCounters``. Raises
    :class:`~aliasfuzz.passes.hygiene.HookNotFound` if the hooked functions moved, and
    ``RuntimeError`` when nested (the patched globals are process-wide).
    """
    global _ACTIVE
    if _ACTIVE:
        raise RuntimeError("reinplace_spy is not reentrant")
    pg = resolve("torch._inductor.fx_passes", "post_grad")
    rp = resolve("torch._inductor.fx_passes", "reinplace")
    orig_pass = resolve("torch._inductor.fx_passes.post_grad", "reinplace_inplaceable_ops")
    orig_core = resolve("torch._inductor.fx_passes.reinplace", "reinplace_inplaceable_ops_core")
    log = SpyLog()
    current: list[InductorCapture] = []

    def ours(step, *args):
        try:
            step(*args)
        except BaseException as e:
            log.internal_error = log.internal_error or e
            raise

    def spy_pass(fake_tensor_updater, graph):
        try:
            cap = InductorCapture(graph)
        except BaseException as e:
            log.internal_error = log.internal_error or e
            raise
        before = _counter_values()
        current.append(cap)
        try:
            orig_pass(fake_tensor_updater, graph)
        finally:
            current.pop()
        after = _counter_values()
        cap.counters = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
        ours(cap.finish, graph)
        log.captures.append(cap)

    def spy_core(graph):
        cap = current[-1] if current else None
        if cap is not None:
            ours(cap.before_core, graph)
        orig_core(graph)
        if cap is not None:
            ours(cap.after_core, graph)

    _ACTIVE = True
    pg.reinplace_inplaceable_ops = spy_pass
    rp.reinplace_inplaceable_ops_core = spy_core
    try:
        yield log
    finally:
        pg.reinplace_inplaceable_ops = orig_pass
        rp.reinplace_inplaceable_ops_core = orig_core
        _ACTIVE = False
