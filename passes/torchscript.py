"""The ``torchscript`` pipeline: a program through TorchScript's graph executors.

The program is rendered as one ``def`` (:func:`aliasfuzz.fuzz.render.render_function_lines`)
and compiled with ``torch.jit.CompilationUnit`` (``mode="script"``) or traced with
``torch.jit.trace`` (``mode="trace"``). It is then called ``calls`` times, each time on
fresh inputs and next to an eager run on identical inputs: the first
``num_profiled_runs`` calls run the profiling graph (``prim::profile`` nodes record
types), later calls run the optimized, specialized graph (TensorExpr fusion groups behind
``prim::TypeCheck``, differentiable graphs behind ``prim::RequiresGradCheck``). Every call
is compared with eager (outputs, inputs after the call, ``requires_grad``, output/input
aliasing, and gradients of a scalar loss when an input requires grad), because executor
state carries from call to call. The graph each call executed is captured
(``torch._C._last_executed_optimized_graph``) for the invariant checks in
:mod:`aliasfuzz.oracle.ts_invariants`.

Every global JIT knob is set and restored by :func:`jit_knobs`, the one place this module
touches them. Mirrors ``torch/jit/_fuser.py`` (``fuser("fuser1")``) and
``torch/testing/_internal/common_utils.py`` (``enable_profiling_mode``); checked on torch
2.13 CPU (see ``shared/notes/pytorch-seams.md`` §6). Programs with custom ops or Triton
launches are rejected as unscriptable: ``Failure(stage="trace", error_type="Unscriptable")``.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import EagerResult, alias_map, make_inputs
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.render import FUNCTION_NAME, load_function, render_function_lines
from aliasfuzz.passes.execution import Execution, Failure

__all__ = [
    "EXECUTORS",
    "CallRecord",
    "TorchScriptOptions",
    "compare_results",
    "jit_knobs",
    "run_calls",
    "run_torchscript",
    "script_function",
    "trace_function",
    "unscriptable_reason",
]

#: executor name -> (profiling executor on, graph executor optimize on); see
#: ``cppProfilingFlagsToProfilingMode`` in torch/testing/_internal/common_utils.py.
EXECUTORS: dict[str, tuple[bool, bool]] = {
    "profiling": (True, True),
    "legacy": (False, True),
    "simple": (True, False),
}

UNSCRIPTABLE = "Unscriptable"


@dataclass(frozen=True)
class TorchScriptOptions:
    """Options of the ``torchscript`` pipeline (merge from a dict with :meth:`from_dict`).

    ``profiling_executor=False`` selects the legacy executor, ``optimize=False`` the simple
    one (no optimization, no profiling). ``calls`` defaults to ``num_profiled_runs + 2`` (two optimized calls, so that state
    left by one optimized call can show in the next). ``other_executors`` also runs the
    legacy and simple executors (those not selected) with the same program.
    ``toggle_optional`` flips ``None``-ness of optional inputs that only ``None``-accepting
    ops use on every odd call. Tolerances are for floating outputs (the cases' rtol/atol).
    """

    profiling_executor: bool = True
    optimize: bool = True
    mode: str = "script"
    num_profiled_runs: int = 1
    calls: int | None = None
    fuser: bool = True
    other_executors: bool = True
    toggle_optional: bool = True
    grads: bool = True
    rtol: float = 1e-4
    atol: float = 1e-5

    def __post_init__(self) -> None:
        if self.mode not in ("script", "trace"):
            raise InvalidArgument(
                f"torchscript mode must be 'script' or 'trace', got {self.mode!r}"
            )
        if not isinstance(self.num_profiled_runs, int) or self.num_profiled_runs < 0:
            raise InvalidArgument("torchscript num_profiled_runs must be an int >= 0")
        if self.calls is not None and (not isinstance(self.calls, int) or self.calls < 1):
            raise InvalidArgument("torchscript calls must be an int >= 1")

    @property
    def n_calls(self) -> int:
        return self.calls if self.calls is not None else self.num_profiled_runs + 2

    @property
    def executor(self) -> str:
        if not self.optimize:
            return "simple"
        return "profiling" if self.profiling_executor else "legacy"

    @classmethod
    def from_dict(cls, d: dict[str, Any] | TorchScriptOptions | None) -> TorchScriptOptions:
        """Options from a dict (unknown keys raise :class:`InvalidArgument`)."""
        if d is None:
            return cls()
        if isinstance(d, cls):
            return d
        known = {f.name for f in fields(cls)}
        bad = sorted(set(d) - known)
        if bad:
            raise InvalidArgument(f"unknown torchscript option(s) {bad} (known: {sorted(known)})")
        return cls(**d)


@contextlib.contextmanager
def jit_knobs(
    executor: str = "profiling", *, num_profiled_runs: int = 1, fuser: bool = True
) -> Iterator[None]:
    """Set TorchScript's global executor/fuser knobs for the block and restore them after.

    ``executor`` is a key of :data:`EXECUTORS`. With ``fuser`` the TensorExpr fuser (NNC)
    is on for CPU and GPU; on a CPU build without LLVM ``te_must_use_llvm_cpu`` is turned
    off, else the first fused run raises ``LLVM Backend not found``.
    Raises :class:`InvalidArgument` on an unknown executor.
    """
    if executor not in EXECUTORS:
        raise InvalidArgument(
            f"unknown TorchScript executor {executor!r} (one of {sorted(EXECUTORS)})"
        )
    C = torch._C
    profiling, optimize = EXECUTORS[executor]
    old_profiling = C._jit_set_profiling_executor(profiling)
    old_optimize = C._get_graph_executor_optimize(optimize)
    old_runs = C._jit_set_num_profiled_runs(num_profiled_runs)
    old_te = C._jit_texpr_fuser_enabled()
    old_cpu, old_gpu = C._jit_can_fuse_on_cpu(), C._jit_can_fuse_on_gpu()
    old_llvm = C._jit_get_te_must_use_llvm_cpu()
    try:
        C._jit_set_texpr_fuser_enabled(fuser)
        C._jit_override_can_fuse_on_cpu(fuser)
        C._jit_override_can_fuse_on_gpu(fuser)
        if not C._llvm_enabled():
            C._jit_set_te_must_use_llvm_cpu(False)
        yield
    finally:
        C._jit_set_te_must_use_llvm_cpu(old_llvm)
        C._jit_override_can_fuse_on_gpu(old_gpu)
        C._jit_override_can_fuse_on_cpu(old_cpu)
        C._jit_set_texpr_fuser_enabled(old_te)
        C._jit_set_num_profiled_runs(old_runs)
        C._get_graph_executor_optimize(old_optimize)
        C._jit_set_profiling_executor(old_profiling)


@contextlib.contextmanager
def _quiet_jit() -> Iterator[None]:
    """Hide TorchScript's own deprecation notice and TracerWarnings (expected, not findings)."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r".*torch\.jit\.\w+. is deprecated", category=DeprecationWarning
        )
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        yield


def script_function(fn: Callable) -> Any:
    """``torch.jit.script(fn)`` for a function defined in a source file."""
    with _quiet_jit():
        return torch.jit.script(fn)


def trace_function(fn: Callable, example: tuple[Any, ...]) -> Any:
    """``torch.jit.trace(fn, example)`` without the trace check (it reruns ``fn``)."""
    with _quiet_jit():
        return torch.jit.trace(fn, example, check_trace=False)


def last_graph() -> torch._C.Graph | None:
    """A copy of the graph the JIT last executed on this thread (None if there is none)."""
    try:
        g = torch._C._last_executed_optimized_graph()
    except RuntimeError:
        return None
    return g.copy() if g is not None else None


# -- comparing one call with eager ---------------------------------------------------


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
            f"only {side} raised {type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}"
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
    outputs = () if ret is None else tuple(ret) if isinstance(ret, tuple) else (ret,)
    return EagerResult(outputs, inputs, alias_map(outputs, inputs, names))


def _grads(res: EagerResult, inputs: tuple[Any, ...]) -> tuple[Any, ...] | str | None:
    """Gradients of ``sum(o.sum())`` over float outputs w.r.t. inputs requiring grad."""
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad and t.is_leaf]
    outs = [
        o
        for o in res.outputs
        if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad
    ]
    if not leaves or not outs or res.error is not None:
        return None
    loss = sum(o.sum() for o in outs)
    try:
        gs = torch.autograd.grad(loss, leaves, allow_unused=True)
    except Exception as e:  # a failing backward is data
        return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    return tuple(torch.zeros_like(t) if g is None else g for t, g in zip(leaves, gs, strict=True))


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
    return f"{type(e).__name__}: {str(e).strip()[:400]}"


@dataclass
class CallRecord:
    """One call of the compiled function next to eager: its phase, differences, graphs.

    ``phase`` is ``profiled`` (a profiling run), ``optimized`` or ``unoptimized`` (the
    legacy and simple executors have no profiled runs). ``graph`` is the graph executed
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
) -> list[CallRecord]:
    """Call ``compiled`` and ``eager`` ``calls`` times on fresh inputs; compare each call.

    ``fresh_inputs(k)`` must build two independent, identical input tuples on each call.
    The caller holds the JIT knobs (:func:`jit_knobs`). An exception raised by
    ``compiled`` where eager did not raise is recorded as the call's ``error`` (a crash).
    """
    records = []
    for k in range(calls):
        phase = "profiled" if k < num_profiled_runs else "optimized"
        e_res = _call(eager, fresh_inputs(k), names)
        s_in = fresh_inputs(k)
        s_res = _call(compiled, s_in, names)
        rec = CallRecord(k, phase, result=s_res)
        if capture_graphs:
            rec.graph = last_graph()
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
                rec.backward_phase = "optimized" if k >= 2 * num_profiled_runs else "profiled"
            if isinstance(gs, str) and not isinstance(ge, str):
                rec.error = f"backward: {gs}"
            elif isinstance(ge, str) and not isinstance(gs, str):
                rec.eager_error = f"backward: {ge}"
            else:
                rec.mismatches += _compare_grads(ge, gs, rtol, atol)
        records.append(rec)
    return records


# -- the pipeline ---------------------------------------------------------------------


def unscriptable_reason(program: Program) -> str | None:
    """Why ``program`` cannot be scripted (an op whose registry row is not scriptable)."""
    for i, op in enumerate(program.body):
        d = lookup(op.op)
        if not d.scriptable or d.prelude:
            return f"statement {i}: {op.op} ({d.kind.value}) is not scriptable"
    return None


def _toggled(program: Program) -> Program | None:
    """The program with the None-ness of its toggleable optional inputs flipped, or None."""
    used = {a for op in program.body if "accepts_none" not in lookup(op.op).tags for a in op.args}
    flip = {t.name for t in program.inputs if t.optional and t.name not in used}
    if not flip:
        return None
    inputs = tuple(replace(t, none=not t.none) if t.name in flip else t for t in program.inputs)
    return Program(program.storages, inputs, program.body, program.outputs, dict(program.meta))


def _compile(program: Program, opts: TorchScriptOptions, example: tuple[Any, ...]):
    """The compiled function, or an ``Unscriptable`` reason string."""
    if opts.mode == "script":
        src = "\n".join(render_function_lines(program)) + "\n"
        try:
            return getattr(torch.jit.CompilationUnit(src), FUNCTION_NAME)
        except Exception as e:  # the frontend rejects it: not a finding, counted
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            return f"frontend: {first[:200]}"
    if any(v is None for v in example):
        return "trace mode: a None input cannot be traced"
    fn, _ = load_function(program)
    try:
        return trace_function(fn, example)
    except Exception as e:  # the tracer rejects it (no outputs, non-tensor output, ...)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return f"trace: {first[:200]}"


def _inputs_factory(program: Program, device: str, opts: TorchScriptOptions):
    other = _toggled(program) if opts.toggle_optional and opts.mode == "script" else None

    def fresh(k: int) -> tuple[Any, ...]:
        return make_inputs(other if other is not None and k % 2 else program, device)

    return fresh


def _run_executor(program, device, opts, executor, capture) -> tuple[list[CallRecord] | str, float]:
    fresh = _inputs_factory(program, device, opts)
    eager_fn, _ = load_function(program)
    names = [t.name for t in program.inputs]
    t0 = time.perf_counter()
    with jit_knobs(executor, num_profiled_runs=opts.num_profiled_runs, fuser=opts.fuser):
        compiled = _compile(program, opts, fresh(0))
        if isinstance(compiled, str):
            return compiled, time.perf_counter() - t0
        recs = run_calls(
            compiled,
            eager_fn,
            fresh,
            names,
            calls=opts.n_calls,
            num_profiled_runs=opts.num_profiled_runs if executor == "profiling" else 0,
            grads=opts.grads,
            capture_graphs=capture,
            rtol=opts.rtol,
            atol=opts.atol,
        )
    if executor != "profiling":
        for r in recs:
            r.phase = "unoptimized" if executor == "simple" else "optimized"
    return recs, time.perf_counter() - t0


def run_torchscript(
    program: Program,
    inputs: tuple[Any, ...] | None = None,
    device: str = "cpu",
    options: dict[str, Any] | TorchScriptOptions | None = None,
) -> Execution:
    """Run ``program`` through TorchScript and compare every call with eager.

    ``inputs`` is accepted for the common adapter signature but every call builds fresh
    inputs with :func:`aliasfuzz.fuzz.eager.make_inputs` (TorchScript state carries across
    calls, so each call needs its own pristine inputs and eager twin). ``outputs``,
    ``inputs_after`` and ``aliases`` are those of the last call; ``graph_after`` is the
    last call's executed graph. ``extra`` holds ``calls`` (list of :class:`CallRecord`),
    ``executors`` (name -> records or an error string, for the legacy/simple executors),
    ``options`` and, for rejected programs, ``rejected`` (the reason).
    Raises :class:`InvalidArgument` for bad options.
    """
    opts = TorchScriptOptions.from_dict(options)
    ex = Execution(pipeline="torchscript", device=device, extra={"options": asdict(opts)})
    reason = unscriptable_reason(program)
    if reason is None:
        res, secs = _run_executor(program, device, opts, opts.executor, capture=True)
        ex.timings["run"] = secs
        reason = res if isinstance(res, str) else None
    if reason is not None:
        ex.extra["rejected"] = reason
        ex.failure = Failure("trace", UNSCRIPTABLE, reason)
        return ex
    ex.extra["calls"] = res
    crashed = next((r for r in res if r.error is not None), None)
    if crashed is not None:
        ex.failure = Failure("run", crashed.error.split(":")[0], crashed.error)
    last = res[-1].result
    ex.outputs, ex.inputs_after, ex.aliases = last.outputs, last.inputs_after, last.aliases
    ex.graph_after = res[-1].graph
    others = {}
    if opts.other_executors:
        for name in ("legacy", "simple"):
            if name != opts.executor:
                recs, secs = _run_executor(program, device, opts, name, capture=False)
                others[name] = recs
                ex.timings[f"run_{name}"] = secs
    ex.extra["executors"] = others
    return ex
