"""Named invariant checks on TorchScript graphs, and the verdict of a ``torchscript`` run.

Each check takes a ``torch._C.Graph`` (an executed graph captured by
:mod:`aliasfuzz.passes.torchscript`) and returns a :class:`Check` (name, ok, message):
data, never an exception. The checks, in order:

* ``lint``: ``Graph::lint`` holds for the graph and every ``Subgraph`` attribute
  (``torch/csrc/jit/ir/ir.cpp``);
* ``no_profile_nodes``: no ``prim::profile`` / ``prim::profile_ivalue`` /
  ``prim::profile_optional`` is left in an optimized graph, searched through nested
  blocks and ``Subgraph`` attributes (profiling nodes are removed by
  ``RemoveProfileNodesAndSpecializeTypes`` in ``profiling_graph_executor_impl.cpp``);
* ``profiled_inputs_specialized``: a profiling node left on a graph input that no guard
  consumes means the profile was recorded and never used to specialize that input;
* ``fusion_guarded``: every ``prim::TensorExprGroup`` / ``prim::DifferentiableGraph`` /
  fusion group sits in the true block of a ``prim::If`` whose condition is produced by a
  guard (``prim::TypeCheck``, ``prim::RequiresGradCheck``, ``prim::TensorExprDynamicGuard``),
  the shape checked on torch 2.13 (``tensorexpr_fuser.cpp``, ``guardDifferentiableGraph``).

:func:`judge` turns a ``torchscript`` :class:`~aliasfuzz.passes.execution.Execution` into a
verdict; :func:`judge_torchscript_case` judges a seed case file (``shared/cases``).
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from aliasfuzz.oracle.verdict import Verdict
from aliasfuzz.passes.execution import Execution
from aliasfuzz.passes.torchscript import (
    TorchScriptOptions,
    jit_knobs,
    script_function,
    trace_function,
)
from aliasfuzz.passes.ts_calls import CallRecord, run_calls

__all__ = [
    "CHECKS",
    "Check",
    "check_fusion_guarded",
    "check_lint",
    "check_no_profile_nodes",
    "check_profiled_inputs_specialized",
    "judge",
    "judge_torchscript_case",
    "run_checks",
]

PROFILE_KINDS = frozenset({"prim::profile", "prim::profile_ivalue", "prim::profile_optional"})
GUARD_KINDS = frozenset(
    {
        "prim::TypeCheck",
        "prim::RequiresGradCheck",
        "prim::TensorExprDynamicGuard",
        "prim::CudaFusionGuard",
    }
)
GUARDED_KINDS = frozenset(
    {
        "prim::TensorExprGroup",
        "prim::DifferentiableGraph",
        "prim::CudaFusionGroup",
        "prim::oneDNNFusionGroup",
    }
)
_SHOW = 4  # offending nodes quoted in a message


@dataclass(frozen=True)
class Check:
    """The result of one named invariant check on one graph."""

    name: str
    ok: bool
    message: str = ""


@dataclass(frozen=True)
class _Site:
    node: Any  # torch._C.Node
    where: str  # path of blocks/subgraphs from the top graph
    in_guarded_block: bool  # a direct child of the true block of a guarded prim::If
    graph_inputs: tuple[int, ...]  # unique ids of the inputs of the (sub)graph it is in


def _walk(block: Any, where: str, guarded: bool, graph_inputs: tuple[int, ...]) -> Iterator[_Site]:
    for n in block.nodes():
        yield _Site(n, where, guarded, graph_inputs)
        guard_if = n.kind() == "prim::If" and n.inputsAt(0).node().kind() in GUARD_KINDS
        for i, b in enumerate(n.blocks()):
            yield from _walk(b, f"{where}/{n.kind()}.block{i}", guard_if and i == 0, graph_inputs)
        if n.hasAttribute("Subgraph"):
            sub = n.g("Subgraph")
            ids = tuple(v.unique() for v in sub.inputs())
            yield from _walk(sub.block(), f"{where}/{n.kind()}.Subgraph", False, ids)


def sites(graph: Any) -> list[_Site]:
    """Every node of ``graph``, through nested blocks and ``Subgraph`` attributes."""
    return list(_walk(graph.block(), "graph", False, tuple(v.unique() for v in graph.inputs())))


def _describe(site: _Site) -> str:
    ins = ", ".join(f"%{v.debugName()}" for v in site.node.inputs())
    return f"{site.node.kind()}({ins}) in {site.where}"


def check_lint(graph: Any) -> Check:
    """``lint``: the graph and its subgraphs pass ``torch._C._jit_pass_lint``."""
    graphs = [("graph", graph)] + [
        (s.where + "/" + s.node.kind(), s.node.g("Subgraph"))
        for s in sites(graph)
        if s.node.hasAttribute("Subgraph")
    ]
    for where, g in graphs:
        try:
            torch._C._jit_pass_lint(g)
        except RuntimeError as e:
            first = next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
            return Check("lint", False, f"{where} fails lint: {first[:300]}")
    return Check("lint", True)


def check_no_profile_nodes(graph: Any) -> Check:
    """``no_profile_nodes``: no profiling node is left anywhere in an optimized graph."""
    left = [s for s in sites(graph) if s.node.kind() in PROFILE_KINDS]
    if not left:
        return Check("no_profile_nodes", True)
    shown = "; ".join(_describe(s) for s in left[:_SHOW])
    return Check("no_profile_nodes", False, f"{len(left)} profiling node(s) left: {shown}")


def check_profiled_inputs_specialized(graph: Any) -> Check:
    """``profiled_inputs_specialized``: no profiling node on a (sub)graph input left unguarded."""
    all_sites = sites(graph)
    guarded_values = {
        v.unique() for s in all_sites if s.node.kind() in GUARD_KINDS for v in s.node.inputs()
    }
    bad = [
        s
        for s in all_sites
        if s.node.kind() in PROFILE_KINDS
        and any(
            v.unique() in s.graph_inputs and v.unique() not in guarded_values
            for v in s.node.inputs()
        )
    ]
    if not bad:
        return Check("profiled_inputs_specialized", True)
    shown = "; ".join(_describe(s) for s in bad[:_SHOW])
    return Check(
        "profiled_inputs_specialized",
        False,
        f"{len(bad)} profiling node(s) on inputs that are never specialized: {shown}",
    )


def check_fusion_guarded(graph: Any) -> Check:
    """``fusion_guarded``: each fusion/differentiable group runs only behind a guard."""
    bad = [s for s in sites(graph) if s.node.kind() in GUARDED_KINDS and not s.in_guarded_block]
    if not bad:
        return Check("fusion_guarded", True)
    shown = "; ".join(_describe(s) for s in bad[:_SHOW])
    return Check("fusion_guarded", False, f"{len(bad)} unguarded group(s): {shown}")


#: The checks in their fixed order.
CHECKS = (
    check_lint,
    check_no_profile_nodes,
    check_profiled_inputs_specialized,
    check_fusion_guarded,
)


def run_checks(graph: Any) -> list[Check]:
    """All :data:`CHECKS` on one optimized graph, in order."""
    return [c(graph) for c in CHECKS]


# -- verdicts --------------------------------------------------------------------------


def _judge_records(records: list[CallRecord], label: str, invariants: bool) -> tuple[Verdict, str]:
    for r in records:
        if r.eager_error is not None:
            return Verdict.INVALID_PROGRAM, f"eager raised on call {r.index}: {r.eager_error}"
    for r in records:
        if r.error is not None:
            return Verdict.CRASH, f"{label} call {r.index} ({r.phase}) raised {r.error}"
    for r in records:
        if r.mismatches:
            return (
                Verdict.MISCOMPILE,
                f"{label} call {r.index} ({r.phase}): {'; '.join(r.mismatches[:3])}",
            )
    if invariants:
        for r in records:
            graphs = [
                (r.phase, r.graph, "forward"),
                (r.backward_phase, r.backward_graph, "backward"),
            ]
            for phase, g, what in graphs:
                if phase != "optimized" or g is None:
                    continue
                for c in run_checks(g):
                    if not c.ok:
                        return (
                            Verdict.INVARIANT,
                            f"{label} call {r.index} {what} graph: {c.name}: {c.message}",
                        )
    return Verdict.OK, ""


def judge(execution: Execution) -> tuple[Verdict, str]:
    """The verdict of a ``torchscript`` run, with a one-line explanation.

    A program TorchScript refuses before running it (scripting or tracing failed) is
    ``unsupported`` when the refusal is documented (:data:`aliasfuzz.oracle.refusals.REFUSALS`:
    an op marked unscriptable, a frontend or tracer rejection; explanation
    ``<rule>: <why> (<message>)``,
    counted, not a finding) and a ``crash`` otherwise (an internal assert of the frontend).
    Programs on which eager raises where TorchScript does not are ``invalid-program``
    (``eager raised on call k: ...``). Then, most severe first over the selected
    executor and the legacy/simple ones: ``crash`` (a call raised where eager did not),
    ``miscompile`` (a call differed from eager), ``invariant`` (a check failed on an
    optimized graph of the profiling executor), else ``ok``. A finding's explanation ends
    with every executor's verdict (``| profiling: miscompile, legacy: ok, simple: ok``).
    """
    f = execution.failure
    if f is not None and f.stage == "trace":
        from aliasfuzz.oracle.refusals import classify

        refusal = classify("torchscript", f)
        if refusal is None:
            return Verdict.CRASH, f"scripting failed: {f.error_type}: {f.message}"
        return Verdict.UNSUPPORTED, f"{refusal.rule}: {refusal.why} ({f.message})"
    executor = TorchScriptOptions.from_dict(execution.extra.get("options")).executor
    results = [_judge_records(execution.extra.get("calls", []), executor, executor == "profiling")]
    for name, recs in execution.extra.get("executors", {}).items():
        if isinstance(recs, str):
            continue  # the other executor could not compile it: no comparison
        results.append(_judge_records(recs, name, False))
    invalid = [vr for vr in results if vr[0] is Verdict.INVALID_PROGRAM]
    if invalid:  # eager raised: no reference to compare any executor with
        return invalid[0]
    findings = [vr for vr in results if vr[0].is_finding]
    if not findings:
        return Verdict.OK, ""
    # Most severe first (the enum's order among findings); the selected executor wins ties.
    verdict, why = min(findings, key=lambda vr: vr[0].rank)
    if len(results) > 1:  # say what each executor gave: a known legacy bug can hide others
        names = [
            executor,
            *(n for n, r in execution.extra["executors"].items() if not isinstance(r, str)),
        ]
        why += " | " + ", ".join(
            f"{n}: {v.value}" for n, (v, _) in zip(names, results, strict=True)
        )
    return verdict, why


def _script_fresh(fn: Any) -> Any:
    """Script ``fn`` from its source text into a new CompilationUnit.

    ``torch.jit.script`` caches per Python function, so a second judgement (another
    executor) would reuse the first one's executor; a fresh unit does not. Functions the
    unit cannot compile alone (they call module helpers) fall back to ``torch.jit.script``.
    """
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        return getattr(torch.jit.CompilationUnit(src), fn.__name__)
    except (OSError, RuntimeError):
        return script_function(fn)


def judge_torchscript_case(
    module: ModuleType, options: dict[str, Any] | None = None
) -> tuple[str, str]:
    """Judge a seed case module (``shared/cases`` format) under the ``torchscript`` pipeline.

    Scripts ``module.program`` (``torch.jit.script``; ``mode: trace`` traces it on
    ``inputs()``), calls it ``module.calls`` times (default 2) on fresh ``inputs()`` next to
    eager, and compares values, inputs after the call, ``requires_grad`` of outputs and
    inputs, aliasing and gradients. ``options`` overrides the module's
    ``pipeline_options["torchscript"]``. Returns ``(verdict value, explanation)``, e.g.
    ``("miscompile", "profiling call 0 (profiled): output 0: values differ ...")``.
    Raises :class:`~aliasfuzz.errors.InvalidArgument` for unknown option keys.
    """
    merged = dict(getattr(module, "pipeline_options", {}).get("torchscript", {}))
    merged.update(options or {})
    if "calls" not in merged:
        merged["calls"] = getattr(module, "calls", 2)
    opts = TorchScriptOptions.from_dict(merged)
    names = list(inspect.signature(module.program).parameters)
    with jit_knobs(opts.executor, num_profiled_runs=opts.num_profiled_runs, fuser=opts.fuser):
        try:
            if opts.mode == "script":
                compiled = _script_fresh(module.program)
            else:
                compiled = trace_function(module.program, module.inputs())
        except Exception as e:  # the case must stay scriptable: failing that is a finding
            return Verdict.CRASH.value, f"{opts.mode} failed: {type(e).__name__}: {str(e)[:200]}"
        records = run_calls(
            compiled,
            module.program,
            lambda k: module.inputs(),
            names,
            calls=opts.n_calls,
            num_profiled_runs=opts.num_profiled_runs if opts.executor == "profiling" else 0,
            grads=opts.grads,
            rtol=opts.rtol,
            atol=opts.atol,
        )
    verdict, why = _judge_records(records, opts.executor, opts.executor == "profiling")
    return verdict.value, why
