"""Trace once per program: one Dynamo capture forked into every Dynamo-fronted pipeline.

``aot_eager``, ``inductor``, ``inductor-noreinplace`` and the fast path
``inductor-reinplace`` each start with the same Dynamo capture of the program; run one by
one (:func:`aliasfuzz.passes.pipelines.run_pipeline`) each pays for it again.
:func:`run_shared` captures once: ``torch.compile`` with a dispatching backend which,
called once by Dynamo with the captured graph, hands each pipeline's own backend
(:data:`aliasfuzz.passes.pipelines.DYNAMO_BACKENDS`, the very code the separate adapters
use) a structural copy of the graph (:func:`fork`) and the Dynamo tracing context as Dynamo
left it, under that pipeline's Inductor config and reinplace spy. Then the compiled frame is
called once per pipeline, each on its own fresh inputs, dispatching to that pipeline's
compiled graph: each pipeline gets its own Execution, decisions and verdict.

Sharing is only safe where the capture stands for every pipeline's own, so a pipeline is
left out of the result (the caller runs it separately, as before) when:

* Dynamo compiled nothing, or compiled a graph after the first pipeline's run (a
  recompilation because a guard failed on another pipeline's inputs, or a path the first
  run did not take): then every pipeline is left out. Graph breaks are shared: each graph
  is forked when Dynamo compiles it during the first run, in the same order as alone;
* the pipeline failed anywhere (its compile or its run raised): a failure's stage, type
  and message must be those of the pipeline's own ``torch.compile`` call, which wraps
  compile errors differently (a failing program pays one extra compile; :func:`plan`
  keeps pipelines out that are known to fail, :data:`NOT_SHARED`);
* its options differ from the first pipeline's (the capture runs under one config).

The compile caches stay off (:mod:`aliasfuzz.passes.hygiene`): every pipeline's compile
runs its passes, so the reinplace pass still runs once per graph per pipeline.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch

from aliasfuzz.fuzz import costs, process
from aliasfuzz.fuzz.grads import leaves as grad_leaves
from aliasfuzz.passes import hygiene
from aliasfuzz.passes.decisions import locate
from aliasfuzz.passes.execution import Execution
from aliasfuzz.passes.hygiene import HookNotFound
from aliasfuzz.passes.pipelines import (
    DYNAMO_BACKENDS,
    PipelineOptions,
    _backward,
    _call,
    _check,
    _Clock,
    _config,
    _Run,
)
from aliasfuzz.passes.spy import SpyLog

__all__ = ["NOT_SHARED", "SHAREABLE", "fork", "kept_out", "op_kinds", "plan", "run_shared"]

#: Pipelines that can fork from one Dynamo capture.
SHAREABLE = frozenset(DYNAMO_BACKENDS)

#: Clock stages that are not the pipeline's own time (others' compiles, the shared capture).
_NOT_OWN = ("done", "idle", "guards")


def _lowers_triton_on_cpu(pipeline: str, device: str, kinds: frozenset[str]) -> bool:
    return pipeline in ("inductor", "inductor-noreinplace") and device == "cpu" and (
        "triton" in kinds
    )


#: Rules that keep a pipeline out of the shared capture of a program, ``name ->
#: (predicate(pipeline, device, op kinds of the program), why)``: the pipeline runs on its
#: own, as before. Only rules whose pipeline is known to fail on such programs belong here:
#: a pipeline that fails in the shared capture is run again on its own (its failure must be
#: its own call's), so sharing it would pay for its compile twice.
NOT_SHARED = {
    "triton-lowering-on-cpu": (
        _lowers_triton_on_cpu,
        "Inductor cannot lower a user Triton kernel for a CPU target (no Triton CPU "
        "backend): its compile fails on every such program",
    ),
}


def op_kinds(program) -> frozenset[str]:
    """The registry op kinds (``OpKind`` values) of the IR ``program``'s statements."""
    from aliasfuzz.fuzz.ops import lookup

    return frozenset(lookup(op.op).kind.value for op in program.body)


def kept_out(pipeline: str, device: str, kinds: frozenset[str]) -> bool:
    """Whether a :data:`NOT_SHARED` rule keeps ``pipeline`` out for a program of op
    ``kinds`` (:func:`op_kinds`) on ``device``: the pipeline is known to fail on it (full
    Inductor cannot lower a user Triton kernel for a CPU target)."""
    return any(rule(pipeline, device, kinds) for rule, _ in NOT_SHARED.values())


def plan(program, pipelines, device: str = "cpu", options=None) -> list[str]:
    """Which of ``pipelines`` to run from one shared capture of ``program``: those in
    :data:`SHAREABLE` whose options equal the first such pipeline's (``options``: pipeline
    name -> :class:`PipelineOptions` or None), less those a :data:`NOT_SHARED` rule keeps
    out; empty when fewer than two are left (nothing to share)."""
    kinds = op_kinds(program)
    options = options or {}
    picked: list[str] = []
    for name in pipelines:
        if name not in SHAREABLE or kept_out(name, device, kinds):
            continue
        if picked and (options.get(name) or PipelineOptions()) != (
            options.get(picked[0]) or PipelineOptions()
        ):
            continue
        picked.append(name)
    return picked if len(picked) >= 2 else []


def fork(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of Dynamo's graph module that a pipeline may rewrite without the others
    seeing it: new nodes with shallow copies of their meta and of the attributes Dynamo
    sets on nodes (``_dynamo_source`` of a placeholder, read by AOTAutograd), and Dynamo's
    module-level attributes (``meta``, parameter sources) copied one level deep. Mirrors
    :func:`~aliasfuzz.passes.tracing.copy_graph_module` plus those attributes."""
    from aliasfuzz.passes.tracing import copy_graph_module

    forked = copy_graph_module(gm, node_attrs=True)
    for key, value in gm.__dict__.items():
        if key not in forked.__dict__:
            forked.__dict__[key] = copy.copy(value)
    forked.meta = dict(gm.meta)
    return forked


def _tracing_state():
    ctx = torch._guards.TracingContext.try_get()
    return ctx, (dict(ctx.__dict__) if ctx is not None else None)


def _restore(ctx, state) -> None:
    if ctx is not None:
        ctx.__dict__.clear()
        ctx.__dict__.update(state)


def run_shared(
    program,
    names: Sequence[str],
    device: str = "cpu",
    options: PipelineOptions | None = None,
    inputs: Sequence[Sequence[Any]] | None = None,
) -> dict[str, Execution]:
    """Executions of ``program`` under the pipelines ``names`` (all in :data:`SHAREABLE`)
    from one Dynamo capture; see the module docstring for the pipelines left out.

    ``inputs``: one fresh input tuple per pipeline (default
    :func:`aliasfuzz.fuzz.eager.make_inputs` each). Each execution's ``timings`` hold
    that pipeline's own trace (its front end after Dynamo), compile and run; the capture
    itself counts as the ``pipeline.shared`` stage of :mod:`aliasfuzz.fuzz.costs`.
    Raises :class:`~aliasfuzz.errors.InvalidArgument` for an unknown pipeline or device,
    ``ValueError`` for a pipeline that cannot be shared.
    """
    from aliasfuzz.fuzz.eager import make_inputs
    from aliasfuzz.fuzz.render import load_function

    opts = options or PipelineOptions()
    for n in names:
        _check(n, device, opts)
        if n not in SHAREABLE:
            raise ValueError(f"pipeline {n!r} has no Dynamo front end to share")
    if not names:
        return {}
    hygiene.setup_process()
    with costs.stage("pipeline.shared"):
        fn, rendered = load_function(program)
        find = locate(fn.__code__.co_filename, rendered.statement_at)
        input_names = tuple(t.name for t in program.inputs)
        fresh = [tuple(inputs[k]) if inputs is not None else tuple(make_inputs(program, device))
                 for k in range(len(names))]
        runs = {n: _Run(n, fn, fresh[k], input_names, device, opts, find)
                for k, n in enumerate(names)}
        exs = {n: Execution(pipeline=n, device=device) for n in names}
        done = _share(fn, names, runs, exs, opts)
        for n in done:
            ex = exs[n]
            ex.timings = {k: v for k, v in runs[n].clock.timings.items() if k not in _NOT_OWN}
            for key, seconds in ex.timings.items():
                costs.carve(f"{n}.{key}", seconds)
    return {n: exs[n] for n in done}


def _share(fn, names, runs, exs, opts) -> list[str]:
    """Capture, compile every pipeline from a fork of each graph, run each pipeline; the
    names that succeeded (none when the capture cannot stand for every pipeline's own)."""
    backends = {n: _backend(n, runs[n], exs[n]) for n in names}
    logs: dict[str, list] = {n: [] for n in names}
    failed: set[str] = set()
    state: dict[str, Any] = {"calls": 0, "current": None, "first_done": False, "late": False}

    def dispatcher(gm, example_inputs):
        state["calls"] += 1
        if state["first_done"]:  # a compile the first pipeline's run did not need: a
            state["late"] = True  # recompile, or a path it did not take; not shared
            return gm.forward
        ctx, saved = _tracing_state()
        compiled: dict[str, Any] = {}
        for n in names:
            if n in failed:
                continue
            run = runs[n]
            # the capturing pipeline's clock: Dynamo builds the guards next, still the
            # compile (pipelines.compiled_then_run), a failure there is traced's; its time
            # is the shared capture's (_NOT_OWN); ``call`` switches it to run
            resume = "guards" if n == state["current"] else "idle"
            if state["calls"] == 1:
                run.clock = _Clock()  # its trace is its own front end, from here
            else:  # a later graph (after a graph break), compiled during the first run
                run.clock.switch("trace")
            _restore(ctx, dict(saved) if saved is not None else None)
            b = backends[n]
            try:
                with b.context() as log, process.system_under_test(f"pipeline {n}"):
                    logs[n].append(log)
                    compiled[n] = b.backend(fork(gm), list(example_inputs))
            except HookNotFound:
                raise
            except Exception:  # noqa: BLE001 - the pipeline's own compile says it again
                failed.add(n)
            run.clock.switch(resume)
        _restore(ctx, saved)

        def call(*args):
            run = runs[state["current"]]
            if run.clock.stage != "run":
                run.clock.switch("run")
            return compiled[state["current"]](*args)  # KeyError: its compile failed

        return call

    hygiene.reset_program()
    first = runs[names[0]]
    dyn = torch.compile(fn, backend=dispatcher, dynamic=opts.dynamic)
    ok: list[str] = []
    for n in names:
        if n in failed:
            continue
        state["current"] = n
        run, ex = runs[n], exs[n]
        # the capture runs in the first call, under the common config (same options)
        ctx = _config(first) if not state["first_done"] else backends[n].context()
        with ctx, process.system_under_test(f"pipeline {n}"):
            if state["first_done"]:
                run.clock.switch("run")
            _call(run, ex, dyn, grads=False)
        if ex.failure is None and n not in failed and grad_leaves(run.inputs):
            # AOTAutograd compiles each pipeline's backward graph at its first backward:
            # under that pipeline's own config and spy, whose log joins its compile's
            with backends[n].context() as log, process.system_under_test(f"pipeline {n}"):
                logs[n].append(log)
                _backward(run, ex)
        if state["calls"] == 0:  # Dynamo captured nothing (or refused): nothing to share
            return []
        state["first_done"] = True
        if ex.failure is None and n not in failed:
            ok.append(n)
    if state["late"]:
        return []
    for n in ok:
        merged = SpyLog() if logs[n] and logs[n][0] is not None else None
        for log in logs[n]:
            if merged is not None and log is not None:
                log.check()
                merged.captures += log.captures
        backends[n].finish(merged)
    return ok


def _backend(name: str, run: _Run, ex: Execution):
    return DYNAMO_BACKENDS[name](run, ex)
