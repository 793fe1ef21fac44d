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
import inspect
import textwrap
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import clone_inputs, make_inputs
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.optional import toggled
from aliasfuzz.fuzz.render import load_function
from aliasfuzz.passes.execution import Execution, Failure
from aliasfuzz.passes.ts_calls import run_calls

__all__ = [
    "EXECUTORS",
    "TorchScriptOptions",
    "call_variants",
    "jit_knobs",
    "rejected",
    "run_torchscript",
    "torchscript_adapter",
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
    ops use on every odd call. ``drop_grad_last`` makes the last call (when there are
    two or more) with ``requires_grad`` off on every input: a specialization for grad that
    is not guarded then shows as outputs requiring grad. Tolerances are for floating
    outputs (the cases' rtol/atol).
    """

    profiling_executor: bool = True
    optimize: bool = True
    mode: str = "script"
    num_profiled_runs: int = 1
    calls: int | None = None
    fuser: bool = True
    other_executors: bool = True
    toggle_optional: bool = True
    drop_grad_last: bool = True
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


# -- the pipeline ---------------------------------------------------------------------


def unscriptable_reason(program: Program) -> str | None:
    """Why ``program`` cannot be scripted (an op whose registry row is not scriptable)."""
    for i, op in enumerate(program.body):
        d = lookup(op.op)
        if not d.scriptable:
            return f"statement {i}: {op.op} ({d.kind.value}) is not scriptable"
    return None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:200]


def _compile(fn: Callable, opts: TorchScriptOptions, example: tuple[Any, ...]):
    """``fn`` scripted from its source text (or traced on ``example``), or a rejection reason.

    Scripting goes through a fresh ``torch.jit.CompilationUnit`` rather than
    ``torch.jit.script``, whose per-function cache would hand a second executor the first
    one's compiled function (and its executor state).
    """
    if opts.mode == "script":
        try:
            src = textwrap.dedent(inspect.getsource(fn))
            return getattr(torch.jit.CompilationUnit(src), fn.__name__)
        except Exception as e:  # the frontend rejects it: not a finding, counted
            return f"frontend: {_first_line(e)}"
    if any(v is None for v in example):
        return "trace mode: a None input cannot be traced"
    try:
        return trace_function(fn, example)
    except Exception as e:  # the tracer rejects it (no outputs, non-tensor output, ...)
        return f"trace: {_first_line(e)}"


@dataclass(frozen=True)
class _Subject:
    """What is run: the eager function (in a real file), input names, fresh inputs per call,
    the caller's own inputs in the last call's variant (used by the last compiled call of
    the selected executor) and as the caller gave them (the execution's ``inputs_after``)."""

    fn: Callable
    names: tuple[str, ...]
    fresh: Callable[[int], tuple[Any, ...]]
    caller_inputs: tuple[Any, ...] | None = None
    caller_originals: tuple[Any, ...] | None = None


def _flipped(inputs: tuple[Any, ...], program: Program, other: Program, device: str):
    """``inputs`` in ``other``'s form: each toggled input ``None`` where it was a tensor, and
    the tensor ``other``'s spec describes (:func:`make_inputs`) where it was ``None``."""
    built: tuple[Any, ...] | None = None
    out = list(inputs)
    for i, (t, u) in enumerate(zip(program.inputs, other.inputs, strict=True)):
        if t.none == u.none:
            continue
        if out[i] is not None:
            out[i] = None
        else:
            built = make_inputs(other, device) if built is None else built
            out[i] = built[i]
    return tuple(out)


def _without_grad(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``inputs`` with ``requires_grad`` off: a leaf becomes ``detach()`` of itself (same
    storage, offset, sizes and strides), so writes still land on the caller's storage."""
    return tuple(
        t.detach() if isinstance(t, torch.Tensor) and t.requires_grad else t for t in inputs
    )


def call_variants(
    program: Program | None, device: str, opts: TorchScriptOptions, grad: bool
) -> Callable[[int, tuple[Any, ...]], tuple[Any, ...]]:
    """``variant(k, inputs)``: call ``k``'s inputs made from inputs in the program's own form.

    With ``toggle_optional`` (script mode) odd calls flip the None-ness of the program's
    toggleable optional inputs (:func:`aliasfuzz.fuzz.optional.toggled`); with
    ``drop_grad_last`` and ``grad`` (some input requires grad) the last of two or more calls
    runs with ``requires_grad`` off. Without a program only the latter applies.
    """
    other = toggled(program) if program is not None and opts.toggle_optional and opts.mode == "script" else None
    drop = opts.drop_grad_last and opts.n_calls > 1 and grad

    def variant(k: int, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        if other is not None and k % 2:
            inputs = _flipped(inputs, program, other, device)
        if drop and k == opts.n_calls - 1:
            inputs = _without_grad(inputs)
        return inputs

    return variant


def _program_inputs(program: Program, device: str, opts: TorchScriptOptions):
    grad = any(t.requires_grad and not t.none for t in program.inputs)
    variant = call_variants(program, device, opts, grad)
    return lambda k: variant(k, make_inputs(program, device))


def _run_executor(subject: _Subject, opts: TorchScriptOptions, executor: str, primary: bool):
    t0 = time.perf_counter()
    with jit_knobs(executor, num_profiled_runs=opts.num_profiled_runs, fuser=opts.fuser):
        compiled = _compile(subject.fn, opts, subject.fresh(0))
        if isinstance(compiled, str):
            return compiled, time.perf_counter() - t0
        recs = run_calls(
            compiled,
            subject.fn,
            subject.fresh,
            subject.names,
            calls=opts.n_calls,
            num_profiled_runs=opts.num_profiled_runs if executor == "profiling" else 0,
            grads=opts.grads,
            capture_graphs=primary,
            rtol=opts.rtol,
            atol=opts.atol,
            last_inputs=subject.caller_inputs if primary else None,
        )
    if executor != "profiling":
        for r in recs:
            r.phase = "unoptimized" if executor == "simple" else "optimized"
    return recs, time.perf_counter() - t0


def _reject(ex: Execution, reason: str) -> Execution:
    ex.extra["rejected"] = reason
    ex.failure = Failure("trace", UNSCRIPTABLE, reason)
    return ex


def rejected(device: str, inputs: tuple[Any, ...], reason: str) -> Execution:
    """The ``torchscript`` execution of a program refused before scripting (``reason``, e.g.
    :func:`unscriptable_reason`): ``failure`` is ``trace``/``Unscriptable``, inputs untouched."""
    ex = Execution(pipeline="torchscript", device=device, extra={"options": {}})
    ex.inputs_after = inputs
    return _reject(ex, reason)


def _execute(subject: _Subject, device: str, opts: TorchScriptOptions) -> Execution:
    ex = Execution(pipeline="torchscript", device=device, extra={"options": asdict(opts)})
    res, ex.timings["run"] = _run_executor(subject, opts, opts.executor, primary=True)
    if isinstance(res, str):
        return _reject(ex, res)
    ex.extra["calls"] = res
    crashed = next((r for r in res if r.error is not None), None)
    if crashed is not None:
        ex.failure = Failure("run", crashed.error.split(":")[0], crashed.error)
    last = res[-1].result
    ex.outputs, ex.inputs_after, ex.aliases = last.outputs, last.inputs_after, last.aliases
    if subject.caller_originals is not None:  # a detached view's writes reached them
        ex.inputs_after = subject.caller_originals
    ex.graph_after = res[-1].graph
    others = {}
    if opts.other_executors:
        for name in ("legacy", "simple"):
            if name != opts.executor:
                others[name], ex.timings[f"run_{name}"] = _run_executor(subject, opts, name, False)
    ex.extra["executors"] = others
    return ex


def run_torchscript(
    program: Program,
    inputs: tuple[Any, ...] | None = None,
    device: str = "cpu",
    options: dict[str, Any] | TorchScriptOptions | None = None,
) -> Execution:
    """Run ``program`` through TorchScript and compare every call with eager.

    Each call gets fresh inputs and an eager twin on identical ones (TorchScript state
    carries across calls): built by :func:`aliasfuzz.fuzz.eager.make_inputs` when
    ``inputs`` is None, else layout-preserving copies of ``inputs``
    (:func:`~aliasfuzz.fuzz.eager.clone_inputs`), whose originals the last call of the
    selected executor uses; either way, in each call's variant (:func:`call_variants`:
    toggleable optional inputs alternate ``None``-ness, the last call may drop
    ``requires_grad``; see :class:`TorchScriptOptions`). ``outputs``, ``inputs_after``, ``aliases`` and ``graph_after``
    are the last call's. ``extra`` holds ``calls`` (list of
    :class:`~aliasfuzz.passes.ts_calls.CallRecord`), ``executors`` (``legacy``/``simple``
    -> records, or a rejection string), ``options`` and, for rejected programs,
    ``rejected`` (the reason; ``failure`` is then ``trace``/``Unscriptable``).
    Raises :class:`InvalidArgument` for bad options.
    """
    opts = TorchScriptOptions.from_dict(options)
    reason = unscriptable_reason(program)
    if reason is not None:
        ex = Execution(pipeline="torchscript", device=device, extra={"options": asdict(opts)})
        return _reject(ex, reason)
    fn, _ = load_function(program)
    names = tuple(t.name for t in program.inputs)
    if inputs is None:
        return _execute(_Subject(fn, names, _program_inputs(program, device, opts)), device, opts)
    return _execute(_on_caller_inputs(fn, names, tuple(inputs), program, device, opts), device, opts)


def _on_caller_inputs(fn, names, inputs, program, device, opts) -> _Subject:
    """The subject run on copies of the caller's ``inputs`` (in ``program``'s form when it
    is known), each call's copy turned into its variant (:func:`call_variants`); the last
    call of the selected executor runs on the caller's own tensors, in the last variant."""
    pristine = clone_inputs(inputs)
    grad = any(isinstance(t, torch.Tensor) and t.requires_grad for t in inputs)
    variant = call_variants(program, device, opts, grad)
    last = variant(opts.n_calls - 1, inputs)
    return _Subject(fn, names, lambda k: variant(k, clone_inputs(pristine)), last, inputs)


def torchscript_adapter(run: Any, ex: Execution) -> None:
    """The ``torchscript`` entry of :data:`aliasfuzz.passes.pipelines.PIPELINES`.

    ``run`` is that module's run record (``fn``, ``inputs``, ``input_names``, ``device``,
    ``options``, and ``program`` when the function renders an IR program); TorchScript
    options come from ``run.options.torchscript`` when that field exists (a dict, see
    :class:`TorchScriptOptions`). Fills ``ex`` as :func:`run_torchscript` does on the
    caller's inputs: each call in its variant (:func:`call_variants`; optional inputs are
    toggled only when ``run.program`` says which), so the campaign's programs reach the
    None-vs-tensor and ``requires_grad`` seams; custom ops fail to script (``frontend:
    ...`` rejection).
    """
    opts = TorchScriptOptions.from_dict(getattr(run.options, "torchscript", None))
    # scripting, profiling and optimizing all happen inside the calls: one "run" span
    # (the executors' own times land in ``ex.timings`` as run / run_<executor>)
    clock = getattr(run, "clock", None)  # the pipelines' run record has one
    if clock is not None:
        clock.switch("run")
    subject = _on_caller_inputs(run.fn, tuple(run.input_names), tuple(run.inputs),
                                getattr(run, "program", None), run.device, opts)
    done = _execute(subject, run.device, opts)
    for f in fields(Execution):
        if f.name not in ("pipeline", "device"):
            setattr(ex, f.name, getattr(done, f.name))
