"""What Inductor's generated code costs, by Inductor's own accounting.

A kept copy is a claim about bytes: the reinplace pass left a clone, so the generated code
reads and writes more memory than it would in place. Inductor already counts that: after
codegen, ``GraphLowering.count_bytes`` sums, per scheduler node (a fused kernel, a
template, an extern call), the bytes of each buffer it reads or writes, each counted as
``min(numel in the node's ranges x deps, buffer size)`` (``torch/_inductor/scheduler.py``
``BaseSchedulerNode.get_read_write_buffer_accesses``: worst-case inputs, best-case
optimization). ``compile_fx`` calls it only when the ``inductor_metrics`` log artifact is
on; :func:`inductor_cost` calls it itself, right after ``GraphLowering.compile_to_module``
(the scheduler is built by then), so nothing is logged and no global metric moves.

Mirrors the ``inductor_metrics_log`` block of ``torch/_inductor/compile_fx.py``
(``fx_codegen_and_compile``), torch 2.11 and 2.13.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["GraphCost", "inductor_cost"]


@dataclass(frozen=True)
class GraphCost:
    """One lowered graph: ``bytes`` read + written per call (int, bytes), ``kernels`` (its
    scheduler nodes that move memory: fused kernels and extern calls), ``nodes``
    (``(scheduler node name, bytes)`` in schedule order)."""

    bytes: int
    kernels: int
    nodes: tuple[tuple[str, int], ...] = field(default=())

    def to_json(self) -> dict:
        return {"bytes": self.bytes, "kernels": self.kernels, "nodes": [list(n) for n in self.nodes]}


@contextmanager
def inductor_cost() -> Iterator[list[GraphCost]]:
    """Within the block, each graph Inductor lowers appends its :class:`GraphCost` to the
    yielded list (graphs in compile order; a graph whose accounting raises is skipped: the
    accounting is PyTorch's, and a failure of it says nothing about the program).

    Nests with itself (the inner list sees only its own graphs; the outer sees all)."""
    from torch._inductor.graph import GraphLowering

    seen: list[GraphCost] = []
    original = GraphLowering.compile_to_module

    def compile_to_module(self, *args, **kwargs):
        mod = original(self, *args, **kwargs)
        try:
            total, per_node = self.count_bytes()[:2]
        except Exception:  # noqa: BLE001 - see the docstring: not the program's failure
            return mod
        # count_bytes reports node sizes as bytes // 4 ("num elem" of float32)
        nodes = tuple((n.get_name(), int(b) * 4) for n, b in per_node)
        seen.append(GraphCost(int(total), sum(1 for _, b in nodes if b > 0), nodes))
        return mod

    GraphLowering.compile_to_module = compile_to_module
    try:
        yield seen
    finally:
        GraphLowering.compile_to_module = original
