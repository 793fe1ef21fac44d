"""Pipeline adapters: run a program through one system under test and record an Execution.

``run_pipeline(name, program, inputs)`` renders the program to a real file
(:func:`aliasfuzz.fuzz.render.load_function`) and calls the adapter ``PIPELINES[name]``;
``run_function`` does the same for any Python function (the seed cases). Every adapter
gets the caller's inputs and clones nothing; a failure of torch is recorded in
``Execution.failure`` with its stage, never raised. What each adapter assumes of the
PyTorch code it hooks is written in ``passes/README.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import process
from aliasfuzz.fuzz.eager import alias_map, normalize_outputs
from aliasfuzz.passes import hygiene
from aliasfuzz.passes.decisions import FxCapture, fx_reinplace_decisions, locate
from aliasfuzz.passes.execution import Execution, Failure
from aliasfuzz.passes.hygiene import HookNotFound, resolve
from aliasfuzz.passes.spy import SpyLog, reinplace_spy
from aliasfuzz.passes.torchscript import torchscript_adapter
from aliasfuzz.passes.tracing import copy_graph_module, trace_functional

__all__ = [
    "NON_DYNAMO_TRACING",
    "PIPELINES",
    "PipelineOptions",
    "inductor_config_patch",
    "run_function",
    "run_pipeline",
]


@dataclass(frozen=True)
class PipelineOptions:
    """Settings passed through to the pipelines.

    ``dynamic``: trace with symbolic sizes (``torch.compile(dynamic=...)``, AOT
    ``dynamic``). ``auto_functionalized_v2``: ``torch._inductor.config.
    enable_auto_functionalized_v2`` while tracing (custom ops are wrapped in v1 when
    False). ``inductor_config``: extra ``torch._inductor.config`` entries for the run.
    ``torchscript``: options of the ``torchscript`` pipeline
    (:class:`aliasfuzz.passes.torchscript.TorchScriptOptions` fields, e.g.
    ``profiling_executor``, ``calls``). ``functorch_config``: ``torch._functorch.config``
    entries for the run (AOTAutograd's switches, e.g. ``view_replay_for_aliased_outputs``:
    the control of a known bug, :mod:`aliasfuzz.campaign.known`). ``dynamo_config``:
    ``torch._dynamo.config`` entries for the run (e.g. ``enable_dynamo_decompositions``: the
    blame's control of Dynamo's own rewrites, :func:`aliasfuzz.oracle.blame.dynamo_rewrite`).
    ``reinplace_off_declines``:
    the run is a control with the reinplace pass off (:meth:`with_passes_off`), whose custom
    ops then keep every clone on torch 2.11 as on 2.13 (:mod:`aliasfuzz.passes.reinplace_off`).
    Unknown config names raise :class:`InvalidArgument`.
    """

    dynamic: bool = False
    auto_functionalized_v2: bool = True
    inductor_config: Mapping[str, Any] = field(default_factory=dict)
    torchscript: Mapping[str, Any] = field(default_factory=dict)
    functorch_config: Mapping[str, Any] = field(default_factory=dict)
    reinplace_off_declines: bool = False
    dynamo_config: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def for_case(cls, pipeline: str, case_options: Mapping[str, Any]) -> PipelineOptions:
        """Options from a case file's ``pipeline_options`` (``shared/cases/README.md``).

        Cases name pipelines by their ``torch.compile`` backend, so ``inductor-*`` take
        ``inductor``'s entries: ``torch._inductor.config`` names, with
        ``enable_auto_functionalized_v2`` mapped to :attr:`auto_functionalized_v2`.
        ``torchscript`` entries are :class:`~aliasfuzz.passes.torchscript.TorchScriptOptions`.
        """
        if pipeline == "torchscript":
            return cls(torchscript=dict(case_options.get("torchscript", {})))
        raw = dict(case_options.get(pipeline.split("-")[0], {}))
        v2 = raw.pop("enable_auto_functionalized_v2", True)
        return cls(auto_functionalized_v2=v2, inductor_config=raw)

    def __post_init__(self) -> None:
        import torch._dynamo.config as dcfg
        import torch._functorch.config as fcfg
        import torch._inductor.config as cfg

        for key in self.dynamo_config:
            if not hasattr(dcfg, key):
                raise InvalidArgument(f"unknown torch._dynamo.config entry {key!r}")
        for key in self.inductor_config:
            if not hasattr(cfg, key):
                raise InvalidArgument(f"unknown torch._inductor.config entry {key!r}")
        for key in self.functorch_config:
            if not hasattr(fcfg, key):
                raise InvalidArgument(f"unknown torch._functorch.config entry {key!r}")

    def with_inductor_config(self, **entries: Any) -> PipelineOptions:
        """A copy with ``entries`` added to :attr:`inductor_config` (see
        :func:`inductor_config_patch` for how ``disabled_passes`` combine: the names are
        appended to those already disabled, never replace them). The controls of the
        oracle and of blame (reinplace pass off, one named pass off, scalar C++ codegen)
        are built this way. Unknown config names raise :class:`InvalidArgument`."""
        from dataclasses import replace

        return replace(self, inductor_config=_merged(self.inductor_config, entries))

    def with_passes_off(self, *names: str) -> PipelineOptions:
        """A copy that also disables the Inductor passes ``names`` (``GraphTransformObserver``
        names such as ``REINPLACE_INPLACEABLE_OPS``, which
        ``torch/fx/passes/graph_transform_observer.py`` checks against
        ``torch._inductor.config.disabled_passes``, torch 2.11 and 2.13). With
        ``REINPLACE_INPLACEABLE_OPS`` among them the copy also sets
        :attr:`reinplace_off_declines`: a control means the pipeline without the pass, which
        torch 2.11's ``decompose_auto_functionalized`` does not give by the config alone
        (:mod:`aliasfuzz.passes.reinplace_off`)."""
        from dataclasses import replace

        out = self.with_inductor_config(disabled_passes=",".join(names))
        if REINPLACE_PASS in names:
            out = replace(out, reinplace_off_declines=True)
        return out


#: The ``GraphTransformObserver`` name of Inductor's reinplace pass (torch 2.11 and 2.13).
REINPLACE_PASS = "REINPLACE_INPLACEABLE_OPS"


def _merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated with ``extra``; ``disabled_passes`` (comma-separated names) are
    the union of both, in order, so that a control never re-enables a pass the caller
    disabled."""
    out = {**base, **extra}
    names = [n for v in (base.get("disabled_passes"), extra.get("disabled_passes")) if v
             for n in str(v).split(",") if n]
    if names:
        out["disabled_passes"] = ",".join(dict.fromkeys(names))
    return out


@contextmanager
def inductor_config_patch(options: PipelineOptions | None, extra: Mapping[str, Any] | None = None):
    """The ``torch._inductor.config.patch`` context of a run with ``options`` (its
    ``inductor_config`` and ``enable_auto_functionalized_v2``) and ``extra`` entries on top
    (``disabled_passes`` combined as in :meth:`PipelineOptions.with_inductor_config`),
    inside ``torch._functorch.config`` and ``torch._dynamo.config`` patches of its
    ``functorch_config`` and ``dynamo_config``; a control whose
    reinplace pass is off (``options.reinplace_off_declines``) also runs inside
    :func:`aliasfuzz.passes.reinplace_off.declining_everything`."""
    import torch._dynamo.config as dcfg
    import torch._functorch.config as fcfg
    import torch._inductor.config as cfg

    from aliasfuzz.passes.reinplace_off import declining_everything

    patch = {"enable_auto_functionalized_v2": getattr(options, "auto_functionalized_v2", True)}
    patch = _merged(patch, getattr(options, "inductor_config", {}) or {})
    patch = _merged(patch, extra or {})
    off = REINPLACE_PASS in str(patch.get("disabled_passes", "")).split(",")
    declines = declining_everything() if off and getattr(options, "reinplace_off_declines", False) \
        else nullcontext()
    with dcfg.patch(dict(getattr(options, "dynamo_config", {}) or {})), \
            fcfg.patch(dict(getattr(options, "functorch_config", {}) or {})), cfg.patch(patch), declines:
        yield


class _Clock:
    """Accumulates wall time per stage; the current stage is the one a failure is tagged with."""

    def __init__(self) -> None:
        self.stage = "trace"
        self.timings: dict[str, float] = {}
        self._t = time.perf_counter()

    def switch(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[self.stage] = self.timings.get(self.stage, 0.0) + now - self._t
        self.stage, self._t = stage, now


@dataclass
class _Run:
    name: str
    fn: Callable
    inputs: tuple[Any, ...]
    input_names: tuple[str, ...]
    device: str
    options: PipelineOptions
    find: Callable
    clock: _Clock = field(default_factory=_Clock)
    program: Any = None  # the IR program ``fn`` renders, when there is one


def _config(run: _Run, extra: Mapping[str, Any] | None = None):
    return inductor_config_patch(run.options, extra)


def _call(run: _Run, ex: Execution, compiled: Callable, grads: bool = True) -> None:
    """Call ``compiled`` on the inputs; fill outputs / failure (stage from the clock).

    When an input is a leaf requiring grad (and ``grads``), the backward of the shared loss
    runs next, in the same context (AOTAutograd compiles the backward graph at its first
    call, so the pipeline's config and the reinplace spy must still hold): ``ex.grads``, or
    a failure at stage ``backward`` (:func:`_backward`)."""
    try:
        ex.outputs = normalize_outputs(compiled(*run.inputs))
        run.clock.switch("done")
    except HookNotFound:
        raise
    except Exception as e:  # a failure of the system under test is data
        # "guards": Dynamo building a shared capture's guards (passes/shared.py), a compile
        stage = {"guards": "trace"}.get(run.clock.stage, run.clock.stage)
        stage = stage if stage in ("trace", "compile", "run") else "run"
        run.clock.switch("done")
        ex.failure = Failure.of(stage, e)
    ex.inputs_after = run.inputs
    if ex.failure is None:
        ex.aliases = alias_map(ex.outputs, run.inputs, run.input_names)
        if grads:
            _backward(run, ex)


def _backward(run: _Run, ex: Execution) -> None:
    """The backward of :func:`aliasfuzz.fuzz.grads.loss` over ``ex.outputs`` with respect
    to the leaf inputs (the one eager runs too): ``ex.grads``; an exception is the
    pipeline's failure at stage ``backward`` (its time is counted as ``backward``)."""
    from aliasfuzz.fuzz.grads import backward, leaves

    if not leaves(run.inputs):
        return
    run.clock.switch("backward")
    try:
        ex.grads = backward(ex.outputs, run.inputs)
    except HookNotFound:
        raise
    except Exception as e:  # the backward graph's failure is data, as the forward's
        ex.failure = Failure.of("backward", e)
    # the backward compile switches the clock to compile/run inside it: close what is open
    run.clock.switch("done")


def _eager(run: _Run, ex: Execution) -> None:
    run.clock.switch("run")
    _call(run, ex, run.fn)


@contextmanager
def _no_spy(run: _Run, extra: Mapping[str, Any] | None = None) -> Iterator[None]:
    with _config(run, extra):
        yield None


@contextmanager
def _spy(run: _Run, extra: Mapping[str, Any] | None = None) -> Iterator[SpyLog]:
    with reinplace_spy() as log, _config(run, extra):
        yield log


@dataclass
class DynamoBackend:
    """One Dynamo-fronted pipeline for one run: the ``torch.compile`` backend (it switches
    the run's clock to ``trace`` / ``compile`` / ``run``), the context it compiles and runs
    in (Inductor config, and the reinplace spy, whose :class:`SpyLog` it yields, or None),
    and ``finish(log)``, which fills the execution from what the backend saw."""

    backend: Callable
    context: Callable[[], AbstractContextManager]
    finish: Callable[[SpyLog | None], None]


def _aot_eager_backend(run: _Run, ex: Execution) -> DynamoBackend:
    aot_eager = resolve("torch._dynamo.backends.debugging", "aot_eager")
    boxed_nop = resolve("torch._dynamo.backends.debugging", "boxed_nop")
    graphs: list[torch.fx.GraphModule] = []

    def fw(gm, example_inputs):
        run.clock.switch("compile")
        graphs.append(copy_graph_module(gm))
        out = boxed_nop(gm, example_inputs)
        run.clock.switch("run")
        return out

    def backend(gm, fake_inputs, **kw):
        run.clock.switch("trace")
        return aot_eager(gm, fake_inputs, fw_compiler=fw, **kw)

    def finish(_log: SpyLog | None) -> None:
        ex.graph_before = graphs[0] if graphs else None
        ex.extra["graphs_before"] = graphs

    return DynamoBackend(backend, lambda: _no_spy(run), finish)


def _inductor_backend(run: _Run, extra: Mapping[str, Any], inner: Callable | None = None,
                      cost: list | None = None):
    """``(backend, context)`` of a Dynamo + Inductor run; with ``cost`` (a list), the
    context also records each lowered graph's :class:`~aliasfuzz.passes.cost.GraphCost`
    into it (full Inductor only: ``inner`` None)."""
    compile_fx = resolve("torch._inductor.compile_fx", "compile_fx")
    if inner is None:
        compile_fx_inner = resolve("torch._inductor.compile_fx", "compile_fx_inner")

        def inner(gm, *args, **kwargs):
            from aliasfuzz.passes import cost as costs_mod

            run.clock.switch("compile")
            # under cost.codegen_only the compile stops once the code is generated; the
            # graph then runs eagerly (a copy: the post-grad passes rewrite gm in place)
            kept = copy_graph_module(gm) if costs_mod.codegen_skipped() else None
            try:
                out = compile_fx_inner(gm, *args, **kwargs)
            except Exception as e:
                if kept is None or not costs_mod.codegen_skipped(e):
                    raise
                out = resolve("torch._functorch.aot_autograd", "make_boxed_func")(kept.forward)
            run.clock.switch("run")
            return out

    def backend(gm, example_inputs):
        run.clock.switch("trace")
        return compile_fx(gm, example_inputs, inner_compile=inner)

    if cost is None:
        return backend, (lambda: _spy(run, extra))
    return backend, (lambda: _costed(_spy(run, extra), cost))


@contextmanager
def _costed(context: AbstractContextManager, cost: list) -> Iterator[Any]:
    """``context``, with each graph Inductor lowers inside it appended to ``cost``."""
    from aliasfuzz.passes.cost import inductor_cost

    with context as log, inductor_cost() as graphs:
        try:
            yield log
        finally:
            cost.extend(graphs)


def _record_captures(run: _Run, ex: Execution, log: SpyLog) -> None:
    for cap in log.captures:
        ex.decisions += cap.decisions(run.find)
        for k, v in cap.counters.items():
            ex.counters[k] = ex.counters.get(k, 0) + v
    if log.captures:
        ex.graph_before = log.captures[0].graph_before
        ex.graph_after = log.captures[0].graph_after
    ex.extra["pass_calls"] = len(log.captures)
    ex.extra["graphs_before"] = [c.graph_before for c in log.captures]


def _inductor_with_pass(run: _Run, ex: Execution) -> DynamoBackend:
    backend, context = _inductor_backend(run, {}, cost=ex.cost)
    return DynamoBackend(backend, context, lambda log: _record_captures(run, ex, log))


def _inductor_noreinplace(run: _Run, ex: Execution) -> DynamoBackend:
    backend, context = _inductor_backend(run, {"disabled_passes": "REINPLACE_INPLACEABLE_OPS"})

    def finish(log: SpyLog | None) -> None:
        ex.extra["pass_calls"] = len(log.captures)

    return DynamoBackend(backend, context, finish)


def drop_dead_getitems(gm: torch.fx.GraphModule) -> int:
    """Erase the ``operator.getitem`` nodes of ``gm`` that nothing uses; their number.

    Inductor's lowering never evaluates an output nobody reads, but running the post-grad
    graph as Python does: after the reinplace pass turns ``_foreach_add`` into
    ``_foreach_add_`` (which returns None), the leftover ``getitem`` of its result raised
    ``'NoneType' object is not subscriptable`` on the fast path only (a false crash the
    second audit found). A getitem has no side effect, so erasing a dead one changes
    nothing else.
    """
    import operator

    erased = 0
    while True:  # a getitem of a dead getitem dies in turn
        dead = [
            n for n in gm.graph.nodes
            if n.op == "call_function" and n.target is operator.getitem and not n.users
        ]
        if not dead:
            return erased
        for n in dead:
            gm.graph.erase_node(n)
        erased += len(dead)


def _post_grad_only(run: _Run) -> Callable:
    """An ``inner_compile`` for ``compile_fx`` that stops where Inductor's codegen starts.

    ``compile_fx`` hands ``inner_compile`` the graph after its pre-grad passes,
    AOTAutograd (functionalization, Inductor's decompositions) and, for inference, the
    joint-graph passes; ``compile_fx_inner`` would then run ``_recursive_post_grad_passes``
    (``reorder_for_locality`` for inference, ``remove_noop_ops``, the pattern passes, the
    reinplace pass and the decompositions of ``auto_functionalized`` and the Triton
    wrapper) and lower the graph. This one runs the same post-grad passes, in Inductor's
    order and under Inductor's config, and returns the graph itself as the compiled
    forward (boxed calling convention, as ``compile_fx_inner``'s result is called).
    Mirrors ``torch/_inductor/compile_fx.py::fx_codegen_and_compile`` up to its
    ``_recursive_post_grad_passes`` call (torch 2.13 and 2.11), including its
    ``V.set_fake_mode`` (needed by a backward graph compiled lazily; the forward's is set by
    ``compile_fx`` already).
    """
    post_grad = resolve("torch._inductor.compile_fx", "_recursive_post_grad_passes")
    make_boxed_func = resolve("torch._functorch.aot_autograd", "make_boxed_func")

    set_fake_mode = resolve("torch._inductor.virtualized", "V").set_fake_mode

    def inner(gm: torch.fx.GraphModule, example_inputs, **kwargs):
        run.clock.switch("compile")
        # the passes read the fake mode from V (FakeTensorUpdater): the forward is compiled
        # inside compile_fx's own ``V.set_fake_mode``, a backward compiled lazily at its first
        # call is not (fx_codegen_and_compile sets it itself, after fake_tensor_prop)
        mode = _fake_mode_of(gm, example_inputs)
        with set_fake_mode(mode) if mode is not None else nullcontext():
            post_grad(gm, is_inference=bool(kwargs.get("is_inference", False)))
        drop_dead_getitems(gm)
        gm.recompile()
        run.clock.switch("run")
        return make_boxed_func(gm.forward)

    return inner


def _fake_mode_of(gm: torch.fx.GraphModule, example_inputs) -> Any:
    """The FakeTensorMode of a graph's example inputs, else of its placeholders' ``val``
    (``torch._guards.detect_fake_mode``); None when neither holds fake tensors."""
    detect = resolve("torch._guards", "detect_fake_mode")
    mode = detect(list(example_inputs))
    if mode is None:
        mode = detect([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])
    return mode


def _inductor_reinplace(run: _Run, ex: Execution) -> DynamoBackend:
    backend, context = _inductor_backend(run, {}, _post_grad_only(run))
    return DynamoBackend(backend, context, lambda log: _record_captures(run, ex, log))


def compiled_then_run(run: _Run, compiled: Callable) -> Callable:
    """``compiled`` (what a Dynamo backend returned) with ``run``'s clock at ``trace`` until
    it is called, then ``run``. Dynamo builds the frame's guards after the backend returns
    (``torch/_dynamo/convert_frame.py``: ``CheckFunctionManager`` after ``compile_inner``'s
    ``transform``): an error there is the compile's, which the clock called ``run``, the
    backend's last switch (audit 45, a4a2e4a960: a guard-building ``IndexError`` titled
    "when run"). Attributes Dynamo reads (``_boxed_call``) are kept (``functools.wraps``
    copies ``__dict__``)."""
    import functools

    run.clock.switch("trace")

    @functools.wraps(compiled)
    def call(*args: Any, **kwargs: Any) -> Any:
        if run.clock.stage != "run":
            run.clock.switch("run")
        return compiled(*args, **kwargs)

    return call


def _through_dynamo(make: Callable[[_Run, Execution], DynamoBackend]):
    """The adapter of a Dynamo-fronted pipeline: its own Dynamo capture of the program."""

    def adapter(run: _Run, ex: Execution) -> None:
        b = make(run, ex)
        hygiene.reset_program()

        def backend(gm: torch.fx.GraphModule, example_inputs: Any, **kw: Any) -> Callable:
            return compiled_then_run(run, b.backend(gm, example_inputs, **kw))

        with b.context() as log:
            _call(run, ex, torch.compile(run.fn, backend=backend, dynamic=run.options.dynamic))
        if log is not None:
            log.check()
        b.finish(log)

    adapter.__doc__ = make.__doc__
    return adapter


#: Dynamo-fronted pipeline name -> its backend factory ``(run, execution) -> DynamoBackend``
#: (:mod:`aliasfuzz.passes.shared` forks them all from one Dynamo capture).
DYNAMO_BACKENDS: dict[str, Callable[[_Run, Execution], DynamoBackend]] = {
    "aot_eager": _aot_eager_backend,
    "inductor": _inductor_with_pass,
    "inductor-noreinplace": _inductor_noreinplace,
    "inductor-reinplace": _inductor_reinplace,
}


def _fx_reinplace(run: _Run, ex: Execution) -> None:
    reinplace = resolve("torch.fx.passes.reinplace", "reinplace")
    hygiene.reset_program()
    from aliasfuzz.fuzz.grads import leaves

    # a forward-only trace: with inputs requiring grad, make_fx under grad mode kept a
    # custom op's result as a constant of another fake mode, which the pass then refused
    # ("Mixing fake modes NYI", a sweep of grad programs); the graph runs under autograd
    # all the same, so outputs require grad as eager's do
    no_grad = torch.no_grad() if leaves(run.inputs) else nullcontext()
    try:
        with _config(run), no_grad:
            gm = trace_functional(run.fn, run.inputs)
    except Exception as e:  # e.g. mutable custom ops: torch's refusal is data
        run.clock.switch("done")
        ex.failure = Failure.of("trace", e)
        ex.inputs_after = run.inputs
        return
    run.clock.switch("compile")
    ex.graph_before = copy_graph_module(gm)
    capture = FxCapture(gm)
    try:
        reinplace(gm, *run.inputs)
    except Exception as e:
        run.clock.switch("done")
        ex.failure = Failure.of("compile", e)
        ex.inputs_after = run.inputs
        return
    ex.decisions = fx_reinplace_decisions(capture, run.find)
    ex.graph_after = gm
    run.clock.switch("run")
    # no gradients: make_fx traces the forward alone and torch.fx.passes.reinplace is a pass
    # over functional forward graphs (no joint graph, no saved tensors): run under autograd,
    # an op it made in place may overwrite a value autograd saved, by the pass's design
    _call(run, ex, gm, grads=False)


#: Pipeline name -> adapter ``(run, execution) -> None`` filling the execution.
PIPELINES: dict[str, Callable[[_Run, Execution], None]] = {
    "eager": _eager,
    **{name: _through_dynamo(make) for name, make in DYNAMO_BACKENDS.items()},
    "fx-reinplace": _fx_reinplace,
    "torchscript": torchscript_adapter,
}


#: Pipelines that trace the program outside Dynamo (``make_fx``): a raw ``@triton.jit``
#: launch is invisible to them (``fuzz.triton_compat.MAKE_FX_LIMIT``), so their rendering
#: spells each launch ``torch.library.wrap_triton(k)[grid](...)``, the capture PyTorch
#: documents (``torch/_library/triton.py``), in the judged program and in its repro alike
#: (:data:`aliasfuzz.fuzz.render.CAPTURE_TRITON`). TorchScript refuses launches as unscriptable.
NON_DYNAMO_TRACING = frozenset({"fx-reinplace"})


#: ``Failure.error_type`` of a program :func:`untraceable_autograd` refuses.
UNTRACEABLE_AUTOGRAD = "UntraceableAutograd"


def untraceable_autograd(program) -> str | None:
    """Why ``make_fx`` (the :data:`NON_DYNAMO_TRACING` pipelines) cannot trace ``program``'s
    autograd rows (:mod:`aliasfuzz.fuzz.ops.autograd`), or None when it holds none.

    ``fx-reinplace`` traces a forward-only ATen graph (``make_fx`` under ``no_grad`` where an
    input requires grad, :func:`_fx_reinplace`): ``torch.autograd.grad`` has no graph to
    differentiate there ("element 0 of tensors does not require grad"), and the grad mode of
    a ``with torch.no_grad():`` block is not a graph node (``make_fx`` records
    ``_set_grad_enabled`` only with ``pre_dispatch=True``,
    ``torch/fx/experimental/proxy_tensor.py``), so the graph would run the write under
    autograd, which refuses it on a leaf."""
    from aliasfuzz.fuzz.ops import lookup
    from aliasfuzz.fuzz.ops.autograd import TAG

    for i, op in enumerate(program.body):
        if TAG in lookup(op.op).tags:
            return (f"statement {i}: {op.op} (autograd) cannot be traced into fx-reinplace's "
                    "forward-only ATen graph")
    return None


def _check(name: str, device: str, options: PipelineOptions | None) -> PipelineOptions:
    if name not in PIPELINES:
        raise InvalidArgument(f"unknown pipeline {name!r} (one of: {', '.join(PIPELINES)})")
    if not (device == "cpu" or device.startswith("cuda")):
        raise InvalidArgument(f"unknown device {device!r} (cpu or cuda[:N])")
    if options is not None and not isinstance(options, PipelineOptions):
        raise InvalidArgument("options must be a PipelineOptions")
    return options or PipelineOptions()


def run_function(
    name: str,
    fn: Callable,
    inputs: Sequence[Any],
    *,
    input_names: Sequence[str] | None = None,
    device: str = "cpu",
    options: PipelineOptions | None = None,
    statement_at: Callable[[int], int | None] | None = None,
    program: Any = None,
) -> Execution:
    """Run ``fn(*inputs)`` through pipeline ``name`` and return the :class:`Execution`.

    ``fn`` must be defined in a real source file (its nodes' lines are read from it).
    ``input_names`` name the inputs in the alias map (default ``in0``, ``in1``, ...);
    ``statement_at`` maps a source line to a statement index; ``program``, the IR
    :class:`~aliasfuzz.fuzz.ir.Program` ``fn`` renders when there is one (given by
    :func:`run_pipeline`), tells ``torchscript`` which optional inputs it may toggle
    between calls. Inputs are used as given
    (mutated in place by programs that mutate them). Raises :class:`InvalidArgument` for
    an unknown pipeline or device; torch's failures land in ``Execution.failure``.
    """
    opts = _check(name, device, options)
    hygiene.setup_process()
    inputs = tuple(inputs)
    names = (
        tuple(input_names)
        if input_names is not None
        else tuple(f"in{i}" for i in range(len(inputs)))
    )
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    run = _Run(name, fn, inputs, names, device, opts, locate(filename, statement_at),
               program=program)
    ex = Execution(pipeline=name, device=device)
    with process.system_under_test(f"pipeline {name}"):
        PIPELINES[name](run, ex)
    # an adapter's own finer timings (per executor, for torchscript) are kept
    ex.timings = {**{k: v for k, v in run.clock.timings.items() if k != "done"}, **ex.timings}
    return ex


def run_pipeline(
    name: str,
    program,
    inputs: Sequence[Any],
    device: str = "cpu",
    options: PipelineOptions | None = None,
) -> Execution:
    """Run a :class:`~aliasfuzz.fuzz.ir.Program` through pipeline ``name`` on ``inputs``.

    The program is rendered to a file and loaded fresh; decisions name the statement
    index each candidate came from. See :func:`run_function` for errors.
    """
    from aliasfuzz.fuzz.render import load_function

    options = _check(name, device, options)
    if name == "torchscript":
        from aliasfuzz.passes.torchscript import rejected, unscriptable_reason

        # a registry row marked scriptable=False (view(dtype): undefined behaviour in
        # TorchScript, torch/_tensor_docs.py; Triton launches) is refused, never run
        reason = unscriptable_reason(program)
        if reason is not None:
            return rejected(device, tuple(inputs), reason)
    if name in NON_DYNAMO_TRACING:
        reason = untraceable_autograd(program)
        if reason is not None:  # refused before tracing: a documented refusal (oracle/refusals.py)
            ex = Execution(pipeline=name, device=device)
            ex.inputs_after = tuple(inputs)
            ex.failure = Failure("trace", UNTRACEABLE_AUTOGRAD, reason)
            return ex
    fn, rendered = load_function(program, capture_triton=name in NON_DYNAMO_TRACING)
    statement_at = rendered.statement_at
    return run_function(
        name,
        fn,
        inputs,
        input_names=[t.name for t in program.inputs],
        device=device,
        options=options,
        statement_at=statement_at,
        program=program,
    )
