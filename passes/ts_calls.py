"""Calling a compiled function next to eager, call after call, and comparing every call.

TorchScript's executors keep state from call to call (profiles, specialized plans,
fallbacks), so one comparison is not enough: :func:`run_calls` calls both sides on fresh,
identical inputs each time and records a :class:`CallRecord` per call (differences, the
executed graph, the backward graph). :func:`~aliasfuzz.fuzz.eager.clone_inputs` copies inputs layout-preservingly
(shared storages stay shared, offsets and strides kept, ``requires_grad`` leaves stay
leaves), so the adapter can re-run on pristine copies of the caller's inputs.

Mirrors nothing in PyTorch; the one JIT hook used is
``torch._C._last_executed_optimized_graph`` (``torch/jit/_fuser.py`` wraps it too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from aliasfuzz.errors import message, one_line
from aliasfuzz.fuzz.eager import EagerResult, alias_map, normalize_outputs
from aliasfuzz.fuzz.grads import backward

__all__ = ["CallRecord", "compare_results", "last_graph", "run_calls"]


def last_graph() -> torch._C.Graph | None:
    """A copy of the graph the JIT last executed on this thread (None if there is none)."""
    try:
        g = torch._C._last_executed_optimized_graph()
    except RuntimeError:
        return None
    return g.copy() if g is not None else None


def _same_tensor(what: str, a: Any, b: Any, rtol: float, atol: float) -> list[str]:
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        if isinstance(a, torch.Tensor) != isinstance(b, torch.Tensor) or (
            not isinstance(a, torch.Tensor) and a != b
        ):
            return [
                f"{what}: eager {type(a).__name__} {a!r:.60}, torchscript {type(b).__name__} {b!r:.60}"
            ]
        return []
    out = []
    if a.requires_grad != b.requires_grad:
        out.append(f"{what}: requires_grad eager {a.requires_grad}, torchscript {b.requires_grad}")
    if a.dtype != b.dtype or a.shape != b.shape:
        return [
            *out,
            f"{what}: eager {a.dtype}{list(a.shape)}, torchscript {b.dtype}{list(b.shape)}",
        ]
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.is_floating_point() or a.is_complex():
        same = torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    else:
        same = torch.equal(a, b)
    if not same:
        diff = (a.double() - b.double()).abs().nan_to_num(float("inf"))
        out.append(f"{what}: values differ (max abs diff {diff.max().item():.3g})")
    return out


def compare_results(
    eager: EagerResult,
    got: EagerResult,
    names: Sequence[str],
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> list[str]:
    """Differences of one compiled call from eager, one line each (empty: the same).

    Compares outputs (dtype, shape, values within ``rtol``/``atol`` for floats, exactly
    otherwise; ``requires_grad``), inputs after the call, and the alias map of outputs to
    inputs. When both raised, the call agrees; when one raised, that is the difference.
    """
    if eager.error is not None or got.error is not None:
        if eager.error is not None and got.error is not None:
            return []
        side, err = ("torchscript", got.error) if got.error is not None else ("eager", eager.error)
        return [
            f"only {side} raised {one_line(err, 200)}"
        ]
    out = []
    if len(eager.outputs) != len(got.outputs):
        return [f"eager returned {len(eager.outputs)} values, torchscript {len(got.outputs)}"]
    for i, (a, b) in enumerate(zip(eager.outputs, got.outputs, strict=True)):
        out += _same_tensor(f"output {i}", a, b, rtol, atol)
    for n, a, b in zip(names, eager.inputs_after, got.inputs_after, strict=True):
        out += _same_tensor(f"input {n} after the call", a, b, rtol, atol)
    if eager.aliases != got.aliases:
        out.append(f"aliasing: eager {eager.aliases}, torchscript {got.aliases}")
    return out


def _call(fn: Callable, inputs: tuple[Any, ...], names: Sequence[str]) -> EagerResult:
    try:
        ret = fn(*inputs)
    except Exception as e:  # the system's failure is data, compared by the caller
        return EagerResult(inputs_after=inputs, error=e)
    outputs = normalize_outputs(ret)
    return EagerResult(outputs, inputs, alias_map(outputs, inputs, names))


def _grads(res: EagerResult, inputs: tuple[Any, ...]) -> tuple[Any, ...] | str | None:
    """Gradients of the shared loss (:func:`aliasfuzz.fuzz.grads.backward`, the one every
    pipeline's comparison uses) w.r.t. the inputs requiring grad, in order; the backward's
    error on one line; None when there is nothing to differentiate."""
    if res.error is not None:
        return None
    try:
        gs = backward(res.outputs, inputs)
    except Exception as e:  # a failing backward is data
        return one_line(e, 200)
    return None if gs is None else tuple(g for g in gs if g is not None)


def _compare_grads(ge: Any, gs: Any, rtol: float, atol: float) -> list[str]:
    if (ge is None and gs is None) or (isinstance(ge, str) and isinstance(gs, str)):
        return []  # no gradients on either side, or both backwards raised
    if isinstance(ge, str) or isinstance(gs, str) or ge is None or gs is None:
        return [
            f"gradients: eager {ge if not isinstance(ge, tuple) else 'computed'}, "
            f"torchscript {gs if not isinstance(gs, tuple) else 'computed'}"
        ]
    out = []
    for i, (a, b) in enumerate(zip(ge, gs, strict=True)):
        out += _same_tensor(f"gradient {i}", a, b, rtol, atol)
    return out


def _one_line(e: BaseException) -> str:
    # TorchScript puts its interpreter traceback first and the real error last: lead with it.
    lines = [ln for ln in message(e).strip().splitlines() if ln.strip()]
    if lines and lines[-1].strip().startswith(f"{type(e).__name__}: "):
        lines[-1] = lines[-1].strip()[len(type(e).__name__) + 2:]  # said once, not twice
    if len(lines) <= 1:
        return f"{type(e).__name__}: {(lines or [''])[0][:400]}"
    return f"{type(e).__name__}: {lines[-1][:300]}\n" + "\n".join(lines[:-1])[:600]


def _is_profiling_graph(graph: Any) -> bool:
    """Whether ``graph`` is a profiling run's graph: ``ProfilingRecord::instrumentGraph``
    (torch/csrc/jit/runtime/profiling_record.cpp) appends an input-less ``prim::profile``
    to the top-level block of every graph it instruments."""
    return graph is not None and any(
        n.kind() == "prim::profile" and n.inputsSize() == 0 for n in graph.nodes()
    )


@dataclass
class CallRecord:
    """One call of the compiled function next to eager: its phase, differences, graphs.

    ``phase`` is ``profiled`` (a profiling run), ``optimized``, ``reprofiled`` (a call
    after the profiled runs whose executed graph is a profiling graph again, e.g. after
    ``requires_grad`` changed) or ``unoptimized`` (the simple executor). ``graph`` is the graph executed
    by the forward call; ``backward_graph`` the one last executed after the backward.
    ``error`` is set when the compiled call (or its backward) raised and eager did not;
    ``eager_error`` when only eager raised: eager gives no reference then, so the call
    says nothing about the compiler (the program is invalid for differential testing).
    """

    index: int
    phase: str
    mismatches: list[str] = field(default_factory=list)
    error: str | None = None
    eager_error: str | None = None
    graph: Any = None
    backward_graph: Any = None
    backward_phase: str | None = None
    result: EagerResult | None = None


def run_calls(
    compiled: Callable,
    eager: Callable,
    fresh_inputs: Callable[[int], tuple[Any, ...]],
    names: Sequence[str],
    *,
    calls: int,
    num_profiled_runs: int = 0,
    grads: bool = True,
    capture_graphs: bool = True,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    last_inputs: tuple[Any, ...] | None = None,
) -> list[CallRecord]:
    """Call ``compiled`` and ``eager`` ``calls`` times on fresh inputs; compare each call.

    ``fresh_inputs(k)`` must build two independent, identical input tuples on each call.
    The caller holds the JIT knobs (:func:`jit_knobs`). An exception raised by
    ``compiled`` where eager did not raise is recorded as the call's ``error`` (a crash).
    ``last_inputs``, when given, replaces the compiled side's fresh inputs on the last call
    (the caller's own tensors, so that they end up mutated as by any pipeline).
    """
    records = []
    for k in range(calls):
        phase = "profiled" if k < num_profiled_runs else "optimized"
        e_res = _call(eager, fresh_inputs(k), names)
        s_in = fresh_inputs(k) if last_inputs is None or k < calls - 1 else tuple(last_inputs)
        s_res = _call(compiled, s_in, names)
        rec = CallRecord(k, phase, result=s_res)
        if capture_graphs:
            rec.graph = last_graph()
            if phase == "optimized" and _is_profiling_graph(rec.graph):
                rec.phase = "reprofiled"  # e.g. requires_grad changed: a new profiling run
        if s_res.error is not None and e_res.error is None:
            rec.error = _one_line(s_res.error)
        elif e_res.error is not None and s_res.error is None:
            rec.eager_error = _one_line(e_res.error)
        else:
            rec.mismatches = compare_results(e_res, s_res, names, rtol, atol)
        if grads and rec.error is None and rec.eager_error is None:
            ge, gs = _grads(e_res, e_res.inputs_after), _grads(s_res, s_in)
            if capture_graphs and gs is not None:
                rec.backward_graph = last_graph()
                profiling = _is_profiling_graph(rec.backward_graph)
                rec.backward_phase = "profiled" if profiling else "optimized"
            if isinstance(gs, str) and not isinstance(ge, str):
                rec.error = f"backward: {gs}"
            elif isinstance(ge, str) and not isinstance(gs, str):
                rec.eager_error = f"backward: {ge}"
            else:
                rec.mismatches += _compare_grads(ge, gs, rtol, atol)
        records.append(rec)
    return records
