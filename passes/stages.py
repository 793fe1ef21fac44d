"""Cutting a pipeline into its stages: the program run through each prefix of the pipeline.

Blame (:mod:`aliasfuzz.oracle.blame`) needs, for a finding, the result of the program after
each stage of the pipeline that found it, so that the first stage whose result departs
from eager can be named. :func:`cut` runs those prefixes, each on fresh inputs, and
returns one :class:`StageRun` per stage, in pipeline order. The stage vocabulary:

=======================  ==========================================================================
stage                    what runs (the prefix of the pipeline up to and including this stage)
=======================  ==========================================================================
``dynamo``               Dynamo's capture (graph breaks included); the captured graphs run eagerly
                         (``backend="eager"``)
``decomposition``        each captured graph traced to ATen with the pipeline's decomposition table
                         and the Python dispatcher on (as AOTAutograd traces), *without*
                         functionalization (``make_fx(tracing_mode="fake")``), then run
``aten-trace``           not a cut of its own: the ``decomposition`` stage with nothing decomposed
                         in Python (no table, Python dispatcher off: :func:`aten_trace`), named
                         when it departs as ``decomposition`` did, so that tracing to ATen
                         (``make_fx``, which AOTAutograd traces with), not a decomposition, is
                         blamed (thirtieth audit cda8407184: ``requires_grad_()`` dropped)
``functionalization``    AOTAutograd: functionalization, the decompositions, input-mutation epilogues,
                         the min-cut partition of a joint graph (``aot_autograd`` with ``boxed_nop``
                         as the pipeline calls it; ``torch.func.functionalize`` for ``fx-reinplace``)
``aot-runtime``          not a cut of its own: AOTAutograd's runtime wrappers (synthetic bases, the
                         replay of outputs that alias inputs, input-mutation epilogues), named
                         when the ``functionalization`` stage raises from them after its functional
                         graph ran (:func:`raised_by_aot_runtime`); ``functionalization`` then
                         agrees for a crash finding. Also when the wrappers return an output of
                         other values than the functional graph computed for it
                         (:func:`_graph_view`): ``functionalization`` is then the graph's values
``aot``                  the graph ``compile_fx`` hands its inner compiler, before the joint-graph
                         passes: AOTAutograd as Inductor calls it, plus Inductor's pre-grad passes
``joint:<pass>``         after each of Inductor's joint-graph passes (``remove_noop_ops``, patterns)
``post-grad:<pass>``     after each of Inductor's post-grad passes (``reorder_for_locality``,
                         ``remove_noop_ops``, pattern passes, ...) before the reinplace pass
``reinplace``            after Inductor's reinplace pass (``reinplace_inplaceable_ops``), with the
                         ``auto_functionalized`` / Triton-wrapper decompositions that execute its
                         decisions; for ``fx-reinplace``: ``torch.fx.passes.reinplace``
``lowering``             full Inductor (lowering, scheduling, codegen) with fusion off
                         (``max_fusion_size=1``)
``scheduler``            full Inductor as configured (fusion on)
``ts-frontend``          TorchScript without graph optimization (the ``simple`` executor)
``ts-optimizer``         the profiling executor with the TensorExpr fuser off
``ts-fuser``             the profiling executor with the TensorExpr fuser on (the pipeline)
=======================  ==========================================================================

Blame also names ``codegen:cpp-vectorized``, which is not a cut: its scalar-codegen control
(:func:`aliasfuzz.oracle.blame.scalar_codegen`) names it when ``cpp.simdlen=1`` makes a
``lowering`` or ``scheduler`` finding of a CPU program go away, and
``backward:donated-buffer``, named by its control
(:func:`aliasfuzz.oracle.blame.donated_buffer`) when AOTAutograd's donated buffers off make
a finding that needed the backward go away.

The Inductor passes are observed through ``torch.fx.passes.graph_transform_observer.
GraphTransformObserver``, which Inductor uses to apply every named joint-graph and post-grad
pass (``torch/_inductor/fx_passes/post_grad.py::post_grad_passes``,
``joint_graph.py::joint_graph_passes``, torch 2.13 and 2.11): a snapshot of the graph is
kept after each pass. One ``torch.compile`` then serves every snapshot: its compiled forward
runs the snapshot the current stage selects, behind AOTAutograd's own runtime wrappers, so
each snapshot executes exactly as the pipeline would have executed that graph. Snapshots
equal to the previous one (a pass that changed nothing) are not run again.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.utils._python_dispatch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import process
from aliasfuzz.fuzz.eager import EagerResult, alias_map, normalize_outputs
from aliasfuzz.passes import hygiene
from aliasfuzz.passes.hygiene import HookNotFound, resolve
from aliasfuzz.passes.pipelines import inductor_config_patch
from aliasfuzz.passes.tracing import copy_graph_module

__all__ = ["ATEN_TRACE", "GRAPH_OUTPUTS", "GRAPH_RAN", "PIPELINE_STAGES", "SYNTHETIC_BASE_FUNCTIONS",
           "StageRun", "aten_trace", "cut", "fresh_outputs_sharing", "inductor_component",
           "order_dependent_copy",
           "sequential_copy", "raised_by_aot_runtime", "synthetic_base_frame"]

#: The fixed stages of each pipeline, in order; ``<inductor>`` stands for the stages
#: discovered from Inductor's named passes (``aot``, ``joint:*``, ``post-grad:*``,
#: ``reinplace``).
PIPELINE_STAGES: dict[str, tuple[str, ...]] = {
    "aot_eager": ("dynamo", "decomposition", "functionalization"),
    "inductor": ("dynamo", "decomposition", "functionalization", "<inductor>", "lowering", "scheduler"),
    "inductor-noreinplace": (
        "dynamo", "decomposition", "functionalization", "<inductor>", "lowering", "scheduler"
    ),
    "inductor-reinplace": ("dynamo", "decomposition", "functionalization", "<inductor>"),
    "fx-reinplace": ("decomposition", "functionalization", "reinplace"),
    "torchscript": ("ts-frontend", "ts-optimizer", "ts-fuser"),
}

#: Inductor passes after which a snapshot cannot run as is: the higher-order ops the
#: reinplace pass decides on execute its decisions only once decomposed.
_REINPLACE = "post-grad:reinplace_inplaceable_ops"
_HOP_DECOMPOSITIONS = ("decompose_triton_kernel_wrapper_functional", "decompose_auto_functionalized")
_AFTER_REINPLACE = (
    "post-grad:fix_auto_functionalized_dtype_views",
    *(f"post-grad:{p}" for p in _HOP_DECOMPOSITIONS),
)


#: What the trail says of the ``functionalization`` stage when AOTAutograd's runtime
#: wrappers raised after its functional graph ran (:func:`raised_by_aot_runtime`).
GRAPH_RAN = "the functional graph traced and ran to completion; AOTAutograd's runtime wrappers raised"


@dataclass
class StageRun:
    """The program's result after one stage.

    ``result`` holds outputs, inputs after the call, the alias map, or the exception;
    ``graph`` is the stage's (first) graph as Python source, when there is one;
    ``seconds`` is wall time of the stage (trace, compile and run).
    """

    stage: str
    result: EagerResult
    graph: str = ""
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def _call(fn: Callable, inputs: tuple[Any, ...], names: Sequence[str]) -> EagerResult:
    """``fn(*inputs)`` as a stage's result; when the cut observes gradients (:func:`cut`'s
    ``grads``) and an input is a leaf requiring grad, the backward of the shared loss runs
    next, in the same context (AOTAutograd compiles the backward graph at its first call):
    ``grads`` or ``grad_error``."""
    from aliasfuzz.fuzz.grads import backward, leaves

    try:
        outputs = normalize_outputs(fn(*inputs))
    except HookNotFound:
        raise
    except Exception as e:  # the system under test failing at this stage is data
        return EagerResult(inputs_after=inputs, error=e)
    res = EagerResult(outputs, inputs, alias_map(outputs, inputs, names))
    if _GRADS.get() and leaves(inputs):
        try:
            res.grads = backward(outputs, inputs)
        except HookNotFound:
            raise
        except Exception as e:  # the stage's backward failing is data, as its forward's
            res.grad_error = e
    return res


def _decomposition_table(pipeline: str, *, functional_only: bool = False) -> dict:
    """The decompositions ``pipeline`` traces with (Inductor's table, or none for
    ``aot_eager``). ``functional_only`` keeps the entries of functional overloads: under
    AOTAutograd, functionalization rewrites ``out=`` and in-place calls into functional ones
    before any decomposition sees them, so a table applied without functionalization must
    not meet them either (Inductor's ``add`` decomposition has no ``out``, for one)."""
    if not pipeline.startswith("inductor"):
        return {}
    table = resolve("torch._inductor.decomposition", "select_decomp_table")()
    if functional_only:
        table = {k: v for k, v in table.items()
                 if not getattr(getattr(k, "_schema", None), "is_mutable", False)}
    return table


# -- the front-end stages -------------------------------------------------------------


def _dynamo_backend(_pipeline: str) -> Callable:
    def backend(gm, _example_inputs):
        return gm.forward

    return backend


def _decomposition_backend(pipeline: str, plain: bool = False) -> Callable:
    """The ``decomposition`` stage's backend; ``plain``: tracing to ATen alone, with no
    decomposition table and the Python dispatcher off (:func:`aten_trace`)."""
    make_fx = resolve("torch.fx.experimental.proxy_tensor", "make_fx")
    python_dispatcher = resolve("torch._dispatch.python", "enable_python_dispatcher")
    table = {} if plain else _decomposition_table(pipeline, functional_only=True)

    def enable_python_dispatcher():
        return contextlib.nullcontext() if plain else python_dispatcher()

    detect_fake_mode = resolve("torch._guards", "detect_fake_mode")

    def backend(gm, example_inputs):
        # AOTAutograd traces with the Python dispatcher on, so CompositeImplicitAutograd
        # ops take their Python decompositions (torch/_decomp) there; so do we. It also
        # traces in Dynamo's own fake mode (aot_autograd.py: detect_fake_mode): a fresh
        # one has its own ShapeEnv, and a guard on one of its symbols has no source in
        # Dynamo's, which raised IndexError in produce_guards (sixth audit c4ca8b0e6d: a
        # dropout after chunk left this cut inconclusive and the blame on functionalization)
        fake_mode = detect_fake_mode(example_inputs)
        if fake_mode is None:
            with enable_python_dispatcher():
                return make_fx(gm, decomposition_table=table, tracing_mode="fake")(*example_inputs)
        fakes = [fake_mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in example_inputs]
        with enable_python_dispatcher(), fake_mode:
            return make_fx(gm, decomposition_table=table, tracing_mode="real")(*fakes)

    return backend


#: The stage :func:`aten_trace` runs (blame's control, not a stage of any pipeline).
ATEN_TRACE = "aten-trace"


def aten_trace(
    pipeline: str, fn: Callable, make_inputs: Callable[[], tuple[Any, ...]],
    input_names: Sequence[str], *, options: Any = None,
) -> StageRun:
    """The ``decomposition`` stage with nothing decomposed in Python: each captured graph
    traced to ATen by ``make_fx`` with no decomposition table and the Python dispatcher
    off, so that only ATen's own C++ composite kernels (eager's own code) decompose, then
    run. Not a stage of any pipeline: blame's control for a finding blamed on
    ``decomposition`` (:func:`aliasfuzz.oracle.blame.aten_trace_control`); a departure here
    is the tracing's (what ``make_fx``, and AOTAutograd through it, records of the
    program), not a decomposition's. Its ``StageRun.stage`` is ``aten-trace``."""
    from aliasfuzz.passes.pipelines import PipelineOptions

    options = options or PipelineOptions()
    t = time.perf_counter()
    res = _compiled_stage(pipeline, functools.partial(_decomposition_backend, plain=True), fn,
                          make_inputs, input_names, options)
    return StageRun(ATEN_TRACE, res, seconds=time.perf_counter() - t)


class _GraphOutputs:
    """The functional graphs' own user outputs, next to what AOTAutograd's runtime wrappers
    returned from them, call by call (the functionalization cut's value split, see
    :func:`_graph_view`). ``pending`` holds the last graph call's user outputs (cloned,
    detached) until its wrapper returns; ``pairs`` one ``(wrapper outputs, graph outputs)``
    pair per compiled call."""

    def __init__(self) -> None:
        self.pending: list[Any] | None = None
        self.pairs: list[tuple[tuple[Any, ...], list[Any]]] = []
        self.order_dependent: str | None = None  # :func:`order_dependent_copy` of a call
        self.intermediate_alias: str | None = None  # :func:`fresh_outputs_sharing` of a call
        #: per compiled graph, its user outputs' ``OutputType`` names (:func:`_user_output_types`)
        self.output_types: list[tuple[str, ...] | None] = []


def _user_output_span() -> tuple[int, int, int] | None:
    """Where the user outputs sit among the outputs of the functional graph being compiled:
    ``(first, count, total)`` from the ``ViewAndMutationMeta`` AOTAutograd stashes on the
    ``TracingContext`` just before it calls the forward compiler (inference path,
    ``torch/_functorch/_aot_autograd/graph_compile.py``, ``aot_stage2_inference``, torch
    2.11 and 2.13): mutated inputs' new values first
    (``num_mutated_inp_runtime_indices``), then the user outputs (``num_outputs``), then the
    bases of outputs that alias intermediates. None when the metadata is missing (the
    autograd path does not stash it) or effect tokens shift the outputs."""
    try:
        ctx = torch._guards.TracingContext.try_get()
        meta = getattr(ctx, "fw_metadata", None)
        if meta is None or getattr(meta, "tokens", None):
            return None
        first, count = meta.num_mutated_inp_runtime_indices, meta.num_outputs
        return first, count, first + count + meta.num_intermediate_bases
    except Exception:  # an internal API: no split rather than a wrong one
        return None


def _fresh_user_outputs() -> tuple[int, ...]:
    """Positions, among the outputs of the functional graph being compiled, of the user
    outputs AOTAutograd's ``ViewAndMutationMeta`` records as fresh (``OutputType.non_alias``,
    torch/_functorch/_aot_autograd/schemas.py): its runtime wrappers return those as the
    graph gives them, while an output that aliases an input is regenerated from that input
    (``gen_alias_from_base``). Empty when the metadata is missing (see
    :func:`_user_output_span`)."""
    span, types = _user_output_span(), _user_output_types()
    if span is None or types is None:
        return ()
    return tuple(span[0] + i for i, t in enumerate(types) if t == "non_alias")


def _user_output_types() -> tuple[str, ...] | None:
    """The ``OutputType`` names (``non_alias``, ``alias_of_input``, ``is_input``, ...) that
    AOTAutograd's ``ViewAndMutationMeta`` (``collect_metadata_analysis``,
    torch/_functorch/_aot_autograd/collect_metadata_analysis.py) gives the user outputs of
    the graph being compiled, in order; its runtime wrappers regenerate an output that
    aliases an input only when it is not ``non_alias``. None when the metadata is missing
    (see :func:`_user_output_span`)."""
    span = _user_output_span()
    if span is None:
        return None
    try:
        info = torch._guards.TracingContext.try_get().fw_metadata.output_info
        return tuple(o.output_type.name for o in info[:span[1]])
    except Exception:  # an internal API: no observation rather than a wrong one
        return None


def output_metadata_note(types: str, departure: str) -> str | None:
    """What AOTAutograd's output metadata says of the output an aliasing departure names:
    ``departure`` is the differential's words (``out0 aliases x1 in eager but is fresh
    compiled``), ``types`` the functionalization cut's ``output_types`` extra (the one
    compiled graph's user output types, comma-separated). ``"AOTAutograd's output metadata
    has out0 non_alias ..."`` when that output is ``non_alias`` there (so the runtime
    wrappers return the graph's fresh tensor rather than regenerating the alias:
    audit 56, 0e76bd01f8, ``zeros(1).set_(x)`` after ``x.add_(1)``); None otherwise."""
    import re

    m = re.search(r"\bout(\d+) aliases [^;]+? in eager but is fresh compiled", departure)
    names = types.split(",") if types else []
    if m is None or int(m.group(1)) >= len(names) or names[int(m.group(1))] != "non_alias":
        return None
    return (f"AOTAutograd's output metadata (collect_metadata_analysis) has out{m.group(1)} "
            "non_alias, so its runtime wrappers return the graph's fresh tensor instead of "
            "regenerating the alias")


def _element_storage(t: Any) -> int | None:
    """The data pointer of ``t``'s storage when ``t`` is a tensor with elements on a storage
    of bytes, else None: a zero-size tensor shares no element."""
    if isinstance(t, torch.Tensor) and t.numel() and t.untyped_storage().nbytes():
        return t.untyped_storage().data_ptr()
    return None


def fresh_output_aliasing_input(outs: Sequence[Any], args: Sequence[Any],
                                fresh: Sequence[int]) -> str | None:
    """What shows a graph returning an input's storage where AOTAutograd expects a fresh
    tensor: the first output at a position of ``fresh`` (:func:`_fresh_user_outputs`)
    that shares the storage of a tensor of ``args`` (the graph's inputs), said in words,
    or None. Such an output reaches the caller as a tensor that aliases the input without
    being its view (``._base`` None): eager's result is either fresh or a view (#198094,
    audit 21 finding 5: graph 2 of the program then asserts "mixed autograd ._base
    states"). Zero-size tensors share no element and are skipped."""
    ptrs: dict[int, int] = {}
    for j, a in enumerate(args):
        ptr = _element_storage(a)
        if ptr is not None:
            ptrs.setdefault(ptr, j)
    for k in fresh:
        j = ptrs.get(_element_storage(outs[k] if k < len(outs) else None))
        if j is not None:
            return (f"graph output {k} shares graph input {j}'s storage where "
                    "AOTAutograd's output metadata has it fresh (non_alias)")
    return None


def fresh_outputs_sharing(outs: Sequence[Any], fresh: Sequence[int]) -> str | None:
    """What shows AOTAutograd leaving two outputs' aliasing to the backend: the first two
    outputs at positions of ``fresh`` (:func:`_fresh_user_outputs`, ``non_alias`` in its
    ``ViewAndMutationMeta``) that share one storage when the functional graph runs eagerly
    (views of one intermediate), said in words, or None. AOTAutograd tracks an output that
    is a view of an intermediate (``alias_of_intermediate*``, regenerated from the base at
    run time) only when the output and its base require grad
    (``collect_metadata_analysis.py``, "We only need to handle the intermediate base case
    when both the intermediate base and the output require gradients", torch 2.11 and 2.13);
    otherwise both are ``non_alias`` and a backend that computes each one on its own returns
    two tensors where eager returns views of one (audit 52, 1e3744d1cf: ``v0 = x * 2;
    return v0.squeeze(0), v0[1:2]`` under Inductor; PyTorch #191449, where PR #191844's
    review parks no-grad views of an intermediate). Zero-size tensors share no element and
    are skipped."""
    seen: dict[int, int] = {}
    for k in fresh:
        ptr = _element_storage(outs[k] if k < len(outs) else None)
        if ptr in seen:
            return (f"graph outputs {seen[ptr]} and {k} share one storage (views of one "
                    "intermediate) where AOTAutograd's output metadata has both fresh "
                    "(non_alias), leaving their aliasing to the backend")
        if ptr is not None:
            seen[ptr] = k
    return None


def _graph_call(run: Callable, seen: _GraphOutputs | None = None,
                span: tuple[int, int, int] | None = None,
                gm: torch.fx.GraphModule | None = None, fresh: Sequence[int] = ()) -> Callable:
    """``run`` (a boxed compiled graph) behind a frame of :func:`_graph_frame`'s code, so
    that a traceback tells whether the functional graph itself was running. With ``seen``
    and ``span``, the graph's user outputs are kept (cloned) in ``seen.pending``; with
    ``seen`` and ``gm`` (the graph ``run`` runs), an order-dependent ``copy_`` of the call
    (:func:`order_dependent_copy`) in ``seen.order_dependent``; with ``seen`` and ``fresh``
    (the positions of outputs AOTAutograd has fresh), two of them sharing a storage
    (:func:`fresh_outputs_sharing`) in ``seen.intermediate_alias``."""
    def graph(args):
        if seen is not None and gm is not None and seen.order_dependent is None:
            seen.order_dependent = order_dependent_copy(gm, args)
        outs = run(args)
        if seen is not None and fresh and seen.intermediate_alias is None:
            seen.intermediate_alias = fresh_outputs_sharing(outs, fresh)
        if seen is not None and span is not None and len(outs) == span[2]:
            seen.pending = [o.detach().clone() if isinstance(o, torch.Tensor) else o
                            for o in outs[span[0]:span[0] + span[1]]]
        return outs

    graph._boxed_call = True
    return graph


#: Storages past this many elements are not enumerated by :func:`_aliased_groups` (the
#: check then says nothing; generated programs' storages are far smaller).
_ENUMERATE_LIMIT = 1 << 22


def _aliased_groups(t: torch.Tensor) -> torch.Tensor | None:
    """For a strided tensor whose index tuples reach one element more than once: the flat
    positions of ``t`` sorted by the storage element they reach, with the elements
    (``(order, elements)`` stacked); None when every index reaches its own element (exact,
    by enumeration: ATen's ``has_internal_overlap`` answers "too hard" for most such
    layouts)."""
    if t.layout != torch.strided or t.numel() < 2 or t.is_sparse:
        return None
    if all(s != 0 or n < 2 for n, s in zip(t.shape, t.stride(), strict=True)) and t.is_contiguous():
        return None
    numel = t.untyped_storage().nbytes() // max(t.element_size(), 1)
    if numel == 0 or numel > _ENUMERATE_LIMIT:
        return None
    elements = torch.arange(numel, device="cpu").as_strided(
        t.size(), t.stride(), t.storage_offset()).reshape(-1)
    if elements.unique().numel() == elements.numel():
        return None
    order = torch.argsort(elements, stable=True)
    return torch.stack([order, elements[order]])


def _conflicting_write(dst: torch.Tensor, src: Any) -> str | None:
    """Why ``dst.copy_(src)`` is order-dependent (None: it is not): two index tuples of
    ``dst`` reach one storage element and ``src`` gives them different values, so which
    value the element keeps depends on the order the kernel writes in (eager's ``copy_``
    and Inductor's generated loop choose differently)."""
    groups = _aliased_groups(dst)
    if groups is None or not isinstance(src, torch.Tensor):
        return None
    vals = src.detach().to("cpu").expand(dst.shape).reshape(-1)[groups[0]]
    same_el = groups[1][1:] == groups[1][:-1]
    a, b = vals[1:][same_el], vals[:-1][same_el]
    differ = a != b
    if a.is_floating_point() or a.is_complex():
        differ &= ~(torch.isnan(a) & torch.isnan(b))
    if not bool(differ.any()):
        return None
    k = int(torch.nonzero(same_el)[int(torch.nonzero(differ)[0])])
    i, j = (int(groups[0][k]), int(groups[0][k + 1]))
    at = [list(map(int, torch.unravel_index(torch.tensor(x), dst.shape))) for x in (i, j)]
    return (f"copy_ into a {tuple(dst.shape)} tensor of strides {tuple(dst.stride())} whose "
            f"indices {at[0]} and {at[1]} reach one storage element, with different values "
            f"({vals[k].item()!r} and {vals[k + 1].item()!r}): the result depends on the write order")


def sequential_copy(dst: torch.Tensor, src: Any) -> torch.Tensor:
    """``dst.copy_(src)`` for a ``dst`` whose index tuples reach one storage element more
    than once (ATen's ``copy_`` refuses it: ``assert_no_internal_overlap``,
    ``aten/src/ATen/MemoryOverlap.cpp``), done as a sequential loop over ``dst``'s indices
    in row-major order would do it: each storage element keeps the value of the last index
    that reaches it. Returns ``dst``. Shapes broadcast as ``copy_``'s do; ``src`` is cast to
    ``dst``'s dtype and device."""
    groups = _aliased_groups(dst)
    if groups is None:
        return dst.copy_(src)
    order, elements = groups
    last = torch.ones_like(elements, dtype=torch.bool)
    last[:-1] = elements[1:] != elements[:-1]  # stable sort: a group's last index is last
    source = torch.as_tensor(src).to(dtype=dst.dtype, device=dst.device).expand(dst.shape)
    numel = dst.untyped_storage().nbytes() // dst.element_size()
    flat = torch.empty(0, dtype=dst.dtype, device=dst.device).set_(
        dst.untyped_storage(), 0, (numel,), (1,))
    with torch.no_grad():
        flat[elements[last].to(dst.device)] = source.reshape(-1)[order[last].to(dst.device)]
    return dst


#: Whether the graphs a cut runs write overlapping destinations sequentially (set by
#: :func:`cut`'s ``sequential_copies``).
_SEQUENTIAL = contextvars.ContextVar("aliasfuzz_sequential_copies", default=False)
#: Whether the stages' runs compute gradients and cut backward graphs (:func:`cut`'s ``grads``).
_GRADS = contextvars.ContextVar("aliasfuzz_cut_grads", default=False)


def _copy_or_sequential(dst: Any, src: Any, non_blocking: bool = False) -> Any:
    """``aten.copy_``, or :func:`sequential_copy` into a destination with internal overlap
    (ATen's ``has_internal_overlap`` says yes, so ``copy_`` would raise)."""
    if isinstance(dst, torch.Tensor) and torch._debug_has_internal_overlap(dst) == 1:
        return sequential_copy(dst, src)
    return torch.ops.aten.copy_.default(dst, src, non_blocking)


def _scatter_or_sequential(base: Any, src: Any, size, stride, storage_offset=None) -> Any:
    """``aten.as_strided_scatter`` (a clone of ``base`` with ``src`` copied into a view of
    it), with the copy done by :func:`_copy_or_sequential`: a write-back through a synthetic
    base at an input's own overlapping layout."""
    out = base.clone()
    _copy_or_sequential(_as_strided_view(out, size, stride, storage_offset), src)
    return out


def _as_strided_view(base: torch.Tensor, size, stride, storage_offset=None) -> torch.Tensor:
    """``base.as_strided(size, stride, storage_offset)`` as ``as_strided_scatter`` takes
    its arguments (no offset: ``base``'s own)."""
    offset = base.storage_offset() if storage_offset is None else storage_offset
    return base.as_strided(size, stride, offset)


#: ATen ops a graph of a value finding's cut runs through their sequential forms.
_SEQUENTIAL_FORMS: dict[Any, Callable] = {
    torch.ops.aten.copy_.default: _copy_or_sequential,
    torch.ops.aten.as_strided_scatter.default: _scatter_or_sequential,
}


def _sequential_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """``gm`` itself, or when the cut asks for it (:func:`cut`'s ``sequential_copies``) a
    copy whose ``copy_`` and ``as_strided_scatter`` calls write overlapping destinations
    sequentially (:data:`_SEQUENTIAL_FORMS`)."""
    if not _SEQUENTIAL.get() or not any(
            n.op == "call_function" and n.target in _SEQUENTIAL_FORMS for n in gm.graph.nodes):
        return gm
    gm = copy_graph_module(gm)
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target in _SEQUENTIAL_FORMS:
            n.target = _SEQUENTIAL_FORMS[n.target]
    gm.recompile()
    return gm


def order_dependent_copy(gm: torch.fx.GraphModule, args: Sequence[Any]) -> str | None:
    """Whether ``gm`` run on ``args`` copies into an argument whose index tuples alias one
    another values that differ at two aliasing indices (an input-mutation epilogue copying
    a whole functional value back into such an input: eighteenth audit adbe63311c,
    ``x.transpose(0, 1).unbind(2)[2].add_(1)`` on a (2, 3, 3) input of strides (1, 3, 1)).
    Eager's meaning of the program is defined (it writes a non-overlapping view); the
    graph's is not: which value an aliased element keeps depends on the write order, so
    the stage that produced the graph made the program order-dependent.

    The ``copy_``'s source is computed as a value (functional semantics): the graph runs
    through ``torch.fx.Interpreter`` on dense copies of ``args`` (run on the aliased input
    itself, ATen's ``select_scatter`` and friends give their outputs the input's aliased
    strides and hide the conflict that Inductor's dense buffers keep). Only when a
    ``copy_`` writes an argument with aliasing indices; None otherwise, and when the
    check's own run raises (the stage's run says what raises)."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    aliased = {n: a for n, a in zip(places, args, strict=False)
               if isinstance(a, torch.Tensor) and _aliased_groups(a) is not None}
    copies = [n for n in gm.graph.nodes if n.op == "call_function"
              and n.target is torch.ops.aten.copy_.default and n.args[0] in aliased]
    # a write-back through a synthetic base: the new value of an aliased input scattered
    # into the base at the input's own (overlapping) layout (nineteenth audit 5a04852caa)
    scatters = [n for n in gm.graph.nodes if n.op == "call_function"
                and n.target is torch.ops.aten.as_strided_scatter.default]
    if not copies and not scatters:
        return None
    found: list[str] = []

    class _Check(torch.fx.Interpreter):
        def run_node(self, n):
            if n in copies and not found:
                a, _ = self.fetch_args_kwargs_from_env(n)
                why = _conflicting_write(aliased[n.args[0]], a[1])
                if why is not None:
                    found.append(why)
            if n in scatters and not found:
                a, kw = self.fetch_args_kwargs_from_env(n)
                if isinstance(a[0], torch.Tensor):
                    why = _conflicting_write(_as_strided_view(a[0], *a[2:], **kw), a[1])
                    if why is not None:
                        found.append(f"as_strided_scatter: {why}")
            if n.op == "call_function" and n.target in _SEQUENTIAL_FORMS:
                # written sequentially: the check must reach a conflict past a refusal
                a, kw = self.fetch_args_kwargs_from_env(n)
                return _SEQUENTIAL_FORMS[n.target](*a, **kw)
            return super().run_node(n)

    dense = [a.detach().clone(memory_format=torch.contiguous_format)
             if isinstance(a, torch.Tensor) else a for a in args]
    try:
        with torch.no_grad():
            _Check(gm).run(*dense)
    except Exception:  # a check, not the stage's run: what it found stands
        pass
    return found[0] if found else None


#: The code object of the frame every functional graph of the functionalization cut runs
#: under (:func:`_graph_call`).
_GRAPH_CODE = _graph_call(lambda a: a).__code__


def _functionalization_backend(pipeline: str, seen: _GraphOutputs | None = None) -> Callable:
    """AOTAutograd with a no-op compiler, as ``pipeline`` calls it (``aot_eager``:
    ``torch/_dynamo/backends/debugging.py`` ``aot_eager``, min-cut partitioner, inference
    input mutations kept in the graph; the Inductor pipelines: the same, with Inductor's
    decompositions, as ``compile_fx`` asks). With ``seen``, each
    compiled call records its functional graph's user outputs next to what the runtime
    wrappers returned (:class:`_GraphOutputs`)."""
    aot_autograd = resolve("torch._dynamo.backends.common", "aot_autograd")
    boxed_nop = resolve("torch._dynamo.backends.debugging", "boxed_nop")

    def fw_compiler(gm, example_inputs):
        span = _user_output_span() if seen is not None else None
        fresh = _fresh_user_outputs() if seen is not None else ()
        if seen is not None:
            seen.output_types.append(_user_output_types())
        return _graph_call(boxed_nop(_sequential_graph(gm), example_inputs), seen, span, gm,
                           fresh)

    # the partitioner decides what the forward saves for the backward: with the default
    # one, a mutated primal's original value is saved where min-cut saves the primal
    # itself, which the input-mutation epilogue then bumps (audit 42, e575661849: aot_eager's
    # "modified by an inplace operation" backward crash agreed at this cut)
    partition = resolve("torch._functorch.partitioners", "min_cut_rematerialization_partition")
    kwargs: dict[str, Any] = {"fw_compiler": fw_compiler, "partition_fn": partition,
                              "keep_inference_input_mutations": True}
    if pipeline.startswith("inductor"):
        # what compile_fx asks of AOTAutograd (compile_fx.py: aot_autograd(...); its
        # partition_fn runs the joint-graph passes, cut later, then min-cut)
        kwargs.update(decompositions=_decomposition_table(pipeline))
    backend = aot_autograd(**kwargs)
    if seen is None:
        return backend

    def recorded(gm, example_inputs):
        compiled = backend(gm, example_inputs)

        @functools.wraps(compiled)
        def run(*args):
            seen.pending = None
            outs = compiled(*args)
            if seen.pending is not None and isinstance(outs, tuple | list):
                seen.pairs.append((tuple(outs), seen.pending))
            return outs

        return run

    return recorded


#: What the trail says of the ``functionalization`` stage when its result is the functional
#: graph's own outputs and AOTAutograd's runtime wrappers changed them (:func:`_graph_view`).
GRAPH_OUTPUTS = "the functional graph's own outputs, before AOTAutograd's runtime wrappers"


def _same_values(a: Any, b: Any) -> bool:
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return a is b or (type(a) is type(b) and a == b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a, b) or (a.is_floating_point() or a.is_complex())
                and torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))


def _graph_view(res: EagerResult, seen: _GraphOutputs) -> EagerResult | None:
    """``res`` with each output that AOTAutograd's runtime wrappers returned replaced by the
    value the functional graph itself computed for it (same shape and dtype; the layout is
    not compared by the differential check). None when no wrapper changed a value.

    The wrappers regenerate outputs that alias inputs or intermediates from their bases
    (``gen_alias_from_base``, replaying view metas, through synthetic bases for aliased
    inputs); when they get it wrong the graph was right and the values depart only after it
    (PyTorch #198095, audits 17a/18a 38cdfbf453, dbca3549f9: a returned ``b[3]`` of
    ``b = s[0::2]`` replayed with stride 1). Inputs after the call are not split: the
    wrappers' copy-back of mutated inputs is not observed apart from the graph."""
    if res.error is not None or not seen.pairs:
        return None
    outputs, changed = list(res.outputs), False
    for j, out in enumerate(res.outputs):
        if not isinstance(out, torch.Tensor):
            continue
        for wrapped, raw in seen.pairs:
            i = next((k for k, w in enumerate(wrapped) if w is out), None)
            if i is None or i >= len(raw):
                continue
            g = raw[i]
            if (isinstance(g, torch.Tensor) and g.shape == out.shape and g.dtype == out.dtype
                    and g.device == out.device and not _same_values(g, out)):
                outputs[j], changed = g, True
            break
    if not changed:
        return None
    return EagerResult(tuple(outputs), res.inputs_after, res.aliases)


def _functionalization_stage(
    pipeline, fn, make, names, options
) -> tuple[EagerResult, EagerResult | None, dict[str, str]]:
    """The functionalization cut's result, the functional graph's own view of it
    (:func:`_graph_view`; None when the wrappers changed no output value), and what its
    graphs' calls showed, as :class:`StageRun` ``extra`` items: ``order_dependent``, why a
    functional graph's ``copy_`` was order-dependent (:func:`order_dependent_copy`);
    ``intermediate_alias``, two outputs AOTAutograd has fresh that share a storage
    (:func:`fresh_outputs_sharing`); ``output_types``, the user output types of AOTAutograd's
    metadata (:func:`_user_output_types`), comma-separated, when one graph was compiled and
    its user outputs are as many as the program's."""
    seen = _GraphOutputs()
    res = _compiled_stage(pipeline, lambda p: _functionalization_backend(p, seen), fn, make,
                          names, options)
    said = {"order_dependent": seen.order_dependent,
            "intermediate_alias": seen.intermediate_alias}
    if len(seen.output_types) == 1 and seen.output_types[0] is not None:
        # one graph: its user outputs are the program's, in order, when as many
        types = seen.output_types[0]
        if res.error is None and len(types) == len(res.outputs):
            said["output_types"] = ",".join(types)
    return res, _graph_view(res, seen), {k: v for k, v in said.items() if v}


#: Where AOTAutograd's runtime wrappers live (``torch/_functorch/_aot_autograd/``:
#: ``runtime_wrappers.py``, ``functional_utils.py``, and the wrappers that
#: ``subclass_codegen.py`` generates, whose frames carry that file's name; torch 2.11 and 2.13).
_AOT_RUNTIME_FILES = ("/_functorch/_aot_autograd/",)
#: Dynamo's compile path: a frame of it on the stack means the error was raised while
#: compiling, not by a compiled function at run time.
_COMPILE_FILES = ("/_dynamo/convert_frame.py", "/_dynamo/output_graph.py")


def raised_by_aot_runtime(e: BaseException) -> bool:
    """Whether ``e`` was raised by AOTAutograd's runtime wrappers around a functional graph
    (synthetic bases, the replay of outputs that alias inputs, input-mutation epilogues:
    ``torch/_functorch/_aot_autograd/runtime_wrappers.py``) rather than by the graph itself
    or by the compile: the wrappers' code is on the exception's stack, and neither the
    functional graph's frame (:func:`_graph_call`) nor Dynamo's compile path is (thirteenth
    audit 63f507a08e: ``gen_alias_from_base`` replays a returned ``diagonal``'s view metas
    on the wrong base after the graph ran; ``torch.func.functionalize`` alone agrees)."""
    files, graph_ran_here = [], False
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        graph_ran_here |= code is _GRAPH_CODE
        files.append(code.co_filename)
        tb = tb.tb_next
    return (not graph_ran_here
            and any(m in f for f in files for m in _AOT_RUNTIME_FILES)
            and not any(m in f for f in files for m in _COMPILE_FILES))


#: Inductor's files (``torch/_inductor/``, torch 2.11 and 2.13) -> the component a crash
#: raised there is in. The ``lowering`` and ``scheduler`` stages are full Inductor (the
#: first with fusion off), so their crash may be lowering's (``GraphLowering`` running the
#: FX graph: ``graph.py``, ``lowering.py``, ``ir.py``), the scheduler's (``Scheduler``:
#: dependencies, fusion, ordering; ``GraphLowering.codegen`` builds it), the generated
#: code's (``codegen/``: C++ and Triton kernels, the wrapper) or its compile's (the C++
#: compiler behind ``codecache.py``). A prefix ending in ``/`` names a folder; files of no
#: component (``utils.py``, ``virtualized.py``, ``sizevars.py``, ``dependencies.py``,
#: ``compile_fx.py``'s driver) are helpers of all of them: the next frame out decides.
INDUCTOR_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("torch/_inductor/scheduler.py", "scheduler"),
    ("torch/_inductor/codegen/", "codegen"),
    ("torch/_inductor/codecache.py", "codecache"),
    ("torch/_inductor/cpp_builder.py", "codecache"),
    ("torch/_inductor/async_compile.py", "codecache"),
    ("torch/_inductor/lowering.py", "lowering"),
    ("torch/_inductor/graph.py", "lowering"),
    ("torch/_inductor/ir.py", "lowering"),
    ("torch/_inductor/kernel/", "lowering"),
    ("torch/_inductor/mkldnn_lowerings.py", "lowering"),
    ("torch/_inductor/fx_passes/", "fx_passes"),  # named by the pass's file
)


#: AOTAutograd's functions that handle graph inputs aliasing one another, one mutated
#: (``torch/_functorch/_aot_autograd/runtime_wrappers.py``: ``aot_wrapper_synthetic_base``
#: merges them into one base, ``_unpack_synthetic_bases`` regenerates each input from it
#: with ``functional_utils.gen_alias_from_base``; torch 2.11 and 2.13).
SYNTHETIC_BASE_FUNCTIONS = ("aot_wrapper_synthetic_base", "merge_view_inputs",
                            "_unpack_synthetic_bases")
_RUNTIME_WRAPPERS = "torch/_functorch/_aot_autograd/runtime_wrappers.py"


def synthetic_base_frame(e: BaseException) -> str | None:
    """``torch/_functorch/_aot_autograd/runtime_wrappers.py:_unpack_synthetic_bases``: the
    innermost frame of :data:`SYNTHETIC_BASE_FUNCTIONS` on the full stack of any exception
    of ``e``'s chain (:func:`aliasfuzz.fuzz.isolated.raise_frames`, every frame: in this
    process; a copy from a child interpreter keeps only its innermost frames), None when the
    error was not raised under them. Audit 46 (ddd5e9100d): a proxy-tracer error raised
    while AOTAutograd regenerated an aliased input from its synthetic base was blamed on
    "functionalization", read as the functionalization of one of the program's ops."""
    from aliasfuzz.fuzz.isolated import exception_chain, raise_frames

    wanted = {f"{_RUNTIME_WRAPPERS}:{name}" for name in SYNTHETIC_BASE_FUNCTIONS}
    found = None
    for x in exception_chain(e):
        for frame in raise_frames(x, most=None):
            if frame in wanted:
                found = frame
    return found


def inductor_component(e: BaseException) -> tuple[str, str] | None:
    """``(component, frame)``: where in Inductor ``e`` was raised, by the innermost frame of
    :data:`INDUCTOR_COMPONENTS`' files on the stack of the innermost exception of its chain
    that has one (:func:`aliasfuzz.fuzz.isolated.raise_frames`, which a copy from a child
    interpreter keeps). The component is ``scheduler``, ``lowering``, ``codegen``,
    ``codecache`` or ``fx_passes/<file>`` (``fx_passes/post_grad``); ``frame`` is
    ``torch/_inductor/scheduler.py:compute_ancestors``. None when no frame of those files is
    known (an error raised outside Inductor, a child's death).

    Why: the ``lowering`` stage is full Inductor with fusion off, so the cut cannot tell
    lowering from the scheduler or codegen by itself (audit 22 88f92dc7f4:
    ``KeyError: 'op1'`` raised by ``Scheduler.compute_ancestors`` after reinplacing a
    custom op onto ``prims.copy_strided``'s buffer was filed as ``lowering``)."""
    from aliasfuzz.fuzz.isolated import exception_chain, raise_frames

    for x in reversed(exception_chain(e)):
        for frame in reversed(raise_frames(x)):
            path = frame.rsplit(":", 1)[0]
            for prefix, component in INDUCTOR_COMPONENTS:
                if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
                    if component == "fx_passes":
                        stem = path[len(prefix):].removesuffix(".py")
                        component = f"fx_passes/{stem}"
                    return component, frame
    return None


def _compiled_stage(
    pipeline: str, make_backend: Callable[[str], Callable], fn: Callable, make: Callable,
    names: Sequence[str], options: Any,
) -> EagerResult:
    hygiene.reset_program()
    with inductor_config_patch(options):
        compiled = torch.compile(fn, backend=make_backend(pipeline),
                                 dynamic=getattr(options, "dynamic", False))
        return _call(compiled, make(), names)


# -- Inductor's passes ------------------------------------------------------------------


@dataclass
class _Snapshots:
    """The graphs of one compiled graph, after each named Inductor pass, in order."""

    names: list[str] = field(default_factory=list)
    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    runnable: dict[str, Callable] = field(default_factory=dict)

    def add(self, name: str, gm: torch.fx.GraphModule) -> None:
        if self.names and self.names[-1] == name:
            name = f"{name}#{sum(n.startswith(name) for n in self.names) + 1}"
        self.names.append(name)
        self.graphs.append(copy_graph_module(gm))


class _Recorder:
    """Patches GraphTransformObserver to keep a snapshot after every named pass."""

    def __init__(self) -> None:
        self.current: _Snapshots | None = None
        #: the snapshot name (``post-grad:<pass>``) of the first named pass that raised
        self.raised: str | None = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        gto = resolve("torch.fx.passes.graph_transform_observer", "GraphTransformObserver")
        orig_graph, orig_gm = gto.apply_graph_pass, gto.apply_gm_pass
        rec = self

        def wrap(orig):
            def apply(obs, pass_fn):
                sub = {"joint_graph_passes": "joint", "post_grad_passes": "post-grad"}.get(
                    getattr(obs, "subsystem", None) or ""
                )
                try:
                    out = orig(obs, pass_fn)
                except BaseException:
                    # a compile that raises inside a named pass is that pass's crash (audit
                    # 45, a4fc2abeee: decompose_auto_functionalized's assert was blamed "aot")
                    if sub and rec.raised is None:
                        rec.raised = f"{sub}:{obs.passname}"
                    raise
                if sub and rec.current is not None and isinstance(obs.gm, torch.fx.GraphModule):
                    rec.current.add(f"{sub}:{obs.passname}", obs.gm)
                return out

            return apply

        gto.apply_graph_pass, gto.apply_gm_pass = wrap(orig_graph), wrap(orig_gm)
        try:
            yield
        finally:
            gto.apply_graph_pass, gto.apply_gm_pass = orig_graph, orig_gm


def _runnable(gm: torch.fx.GraphModule) -> Callable:
    """``gm`` as a boxed callable; the higher-order ops the reinplace pass decides on are
    decomposed first, so that its decisions are executed.

    ``auto_functionalized`` / ``_v2`` nodes are decomposed only once the reinplace pass has
    decided on them (``node.meta["only_clone_these_tensors"]``, which the op's own eager
    call would ignore). Before that they run as they are, through the op's dense
    implementation on the real tensors, as ``aot_eager`` runs them: Inductor's
    decomposition is traced on the fake tensors' layouts (``replace_by_example``), and run
    eagerly on real tensors of other layouts its regenerated views read the wrong elements
    (tenth audit a646b390df and ac49bfc94f, eleventh audit ff33ae0a1b: the ``aot`` snapshot
    departed where ``aot_eager`` agrees). A user Triton kernel's decision is in its kwargs
    (``tensors_to_clone``), which the decomposition and the op's own call both honour."""
    pg = resolve("torch._inductor.fx_passes", "post_grad")
    detect_fake_mode = resolve("torch._guards", "detect_fake_mode")
    virtualized = resolve("torch._inductor.virtualized", "V")
    make_boxed_func = resolve("torch._functorch.aot_autograd", "make_boxed_func")
    gm = copy_graph_module(gm)
    names = {n: getattr(n.target, "__name__", "") for n in gm.graph.nodes}
    wanted = {
        "decompose_triton_kernel_wrapper_functional":
            "triton_kernel_wrapper_functional" in names.values(),
        "decompose_auto_functionalized": any(
            "only_clone_these_tensors" in n.meta for n, name in names.items()
            if name in ("auto_functionalized", "auto_functionalized_v2")),
    }
    passes = [p for p in _HOP_DECOMPOSITIONS if wanted[p]]
    if passes:
        fake = detect_fake_mode([n.meta["val"] for n in gm.graph.nodes if "val" in n.meta])
        with virtualized.set_fake_mode(fake):
            for name in passes:
                getattr(pg, name)(gm.graph)
    _foreach_results(gm)
    gm.recompile()
    return make_boxed_func(_sequential_graph(gm).forward)


def _foreach_results(gm: torch.fx.GraphModule) -> None:
    """Give every in-place foreach node of ``gm`` the result Inductor's lowering gives it.

    The reinplace pass turns ``_foreach_add`` into ``_foreach_add_`` and leaves the
    ``getitem`` nodes that read its results; eagerly the in-place overload returns None
    and those reads raise ``TypeError: 'NoneType' object is not subscriptable``, while
    Inductor's lowering (``torch/_inductor/lowering.py``, ``register_foreach_inplace``)
    returns the mutated tensors, its first argument. Without this the ``reinplace``
    snapshot of such a graph was ``inconclusive`` for a reason of the harness's making
    (fresh user 47's B13, miscompile-joint-remove-noop-ops-120937cd64)."""
    try:
        inplace = resolve("torch._inductor.lowering", "inplace_foreach_ops")
    except HookNotFound:  # no lowering table: the graph runs as it is
        return
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in inplace and node.users:
            node.args = (node.target, *node.args)
            node.target = _foreach_inplace


def _foreach_inplace(op: Callable, *args: Any, **kwargs: Any) -> list[Any]:
    """``op(*args, **kwargs)`` (an in-place foreach overload), returning what it mutated:
    its first argument's tensors, as Inductor's lowering of the op returns them."""
    op(*args, **kwargs)
    return list(args[0])


def _inductor_stages(
    pipeline: str, fn: Callable, make: Callable, names: Sequence[str], options: Any
) -> list[StageRun]:
    """Compile once through ``compile_fx`` with snapshots, then run every distinct one."""
    compile_fx = resolve("torch._inductor.compile_fx", "compile_fx")
    compile_fx_mod = importlib.import_module("torch._inductor.compile_fx")
    post_grad = resolve("torch._inductor.compile_fx", "_recursive_post_grad_passes")
    joint = resolve("torch._inductor.compile_fx", "_recursive_joint_graph_passes")
    make_boxed_func = resolve("torch._functorch.aot_autograd", "make_boxed_func")
    rec = _Recorder()
    graphs: list[_Snapshots] = []
    selected: list[str] = [""]
    # snapshot -> what its first calls showed (_snapshot_runner): StageRun.extra's keys
    observed: dict[str, dict[str, str | None]] = {}

    def begin(gm) -> _Snapshots:
        rec.current = _Snapshots()
        rec.current.add("aot", gm)
        graphs.append(rec.current)
        return rec.current

    def joint_with_snapshot(gm, *args, **kwargs):
        begin(gm)  # inference: the joint-graph passes run on the forward graph itself
        return joint(gm, *args, **kwargs)

    def inner(gm, _example_inputs, **kwargs):
        if kwargs.get("is_backward"):
            if not _GRADS.get():  # a forward finding: the backward runs as compiled
                post_grad(gm, is_inference=False)
                gm.recompile()
                return make_boxed_func(gm.forward)
            # a gradient finding: the backward graph runs the snapshot the stage selects,
            # the same pass as the forward's (both get post_grad's passes in training)
            rec.current = _Snapshots()
            rec.current.add("aot", gm)
            graphs.append(rec.current)
            snaps = rec.current
            post_grad(gm, is_inference=False)
            rec.current = None
            return _snapshot_runner(snaps, selected)
        inference = bool(kwargs.get("is_inference", False))
        if rec.current is None or not inference:
            # training: the joint passes saw the joint graph; the forward starts here
            if rec.current is not None:
                graphs.remove(rec.current)
            begin(gm)
        snaps = rec.current
        post_grad(gm, is_inference=inference)
        rec.current = None

        return _snapshot_runner(snaps, selected, observed, _fresh_user_outputs())

    def backend(gm, example_inputs):
        return compile_fx(gm, example_inputs, inner_compile=inner)

    hygiene.reset_program()
    t0 = time.perf_counter()
    compile_fx_mod._recursive_joint_graph_passes = joint_with_snapshot
    try:
        with rec.installed(), inductor_config_patch(options):
            compiled = torch.compile(fn, backend=backend, dynamic=getattr(options, "dynamic", False))
            selected[0] = "aot"
            first = _call(compiled, make(), names)
            if first.error is not None or not graphs:
                # raised while compiling: by the named joint or post-grad pass that raised,
                # else by AOTAutograd or the pre-grad passes
                # (a decomposition after the reinplace pass by its own name: it raised)
                stage = "aot" if first.error is None or rec.raised is None else \
                    "reinplace" if rec.raised == _REINPLACE else rec.raised
                return [StageRun(stage, first, seconds=time.perf_counter() - t0)]
            order = _stage_order(graphs[0].names)

            def said(snapshot: str) -> dict[str, Any]:
                return {k: v for k, v in observed.get(snapshot, {}).items() if v}

            runs = [StageRun("aot", first, _code(graphs[0], "aot"), time.perf_counter() - t0,
                             said("aot"))]
            for stage, snapshot in order[1:]:
                if _same_as_previous(graphs, snapshot):
                    continue
                t = time.perf_counter()
                selected[0] = snapshot
                runs.append(StageRun(stage, _call(compiled, make(), names), _code(graphs[0], snapshot),
                                     time.perf_counter() - t, said(snapshot)))
            return runs
    finally:
        compile_fx_mod._recursive_joint_graph_passes = joint


def _snapshot_runner(snaps: _Snapshots, selected: list[str],
                     observed: dict[str, dict[str, str | None]] | None = None,
                     fresh: Sequence[int] = ()) -> Callable:
    """A boxed callable that runs the snapshot of ``snaps`` named ``selected[0]`` (the
    stage being cut), made runnable once (:func:`_runnable`). With ``observed``, what the
    snapshot's calls show is kept under its name: ``order_dependent``, the first call's
    :func:`order_dependent_copy`; ``fresh_output_alias``, the first
    :func:`fresh_output_aliasing_input` of a call (an output at a ``fresh`` position);
    ``intermediate_alias``, the first :func:`fresh_outputs_sharing` of a call."""
    def dispatch(args):
        i = _index_for(snaps.names, selected[0])
        seen = observed.setdefault(selected[0], {}) if observed is not None else None
        if seen is not None and "order_dependent" not in seen:
            seen["order_dependent"] = order_dependent_copy(snaps.graphs[i], args)
        run = snaps.runnable.get(snaps.names[i])
        if run is None:
            run = snaps.runnable[snaps.names[i]] = _runnable(snaps.graphs[i])
        check = fresh and seen is not None and not seen.get("fresh_output_alias")
        inputs = list(args) if check else ()  # run may clear args
        outs = run(args)
        if check:
            seen["fresh_output_alias"] = fresh_output_aliasing_input(outs, inputs, fresh)
        if fresh and seen is not None and not seen.get("intermediate_alias"):
            seen["intermediate_alias"] = fresh_outputs_sharing(outs, fresh)
        return outs

    dispatch._boxed_call = True  # AOTAutograd passes the argument list itself
    return dispatch


def _stage_order(names: list[str]) -> list[tuple[str, str]]:
    """(stage name, snapshot name) pairs: every snapshot, with the reinplace pass and the
    decompositions that execute its decisions reported as one stage, ``reinplace``."""
    out = []
    for n in names:
        if n in _AFTER_REINPLACE:
            continue
        out.append(("reinplace" if n == _REINPLACE else n, n))
    return out


def _index_for(names: list[str], snapshot: str) -> int:
    if snapshot in names:
        return names.index(snapshot)
    return len(names) - 1 if snapshot else 0


def _code(snaps: _Snapshots, name: str) -> str:
    return snaps.graphs[_index_for(snaps.names, name)].code


def _key(gm: torch.fx.GraphModule) -> str:
    """What running a snapshot depends on: its code, and the clone decisions the reinplace
    pass leaves in ``auto_functionalized`` nodes' meta (not in the code until decomposed)."""
    clones = [n.meta.get("only_clone_these_tensors") for n in gm.graph.nodes]
    return gm.code + repr(clones)


def _same_as_previous(graphs: list[_Snapshots], snapshot: str) -> bool:
    """Whether no compiled graph changed in the pass that produced ``snapshot``."""
    for snaps in graphs:
        i = _index_for(snaps.names, snapshot)
        if i == 0 or _key(snaps.graphs[i]) != _key(snaps.graphs[i - 1]):
            return False
    return True


def _full_inductor(pipeline: str, fn, make, names, options, fusion: bool) -> EagerResult:
    """Full Inductor (``lowering`` without fusion, ``scheduler`` as configured) on fresh
    inputs. Every view its wrapper makes is checked against its storage, and one past it
    raises :class:`~aliasfuzz.oracle.wrapper_bounds.OutOfBoundsView` before a kernel writes
    through it (as the campaign's judge runs it): the stage then departs the same way every
    time, where a heap corrupted by the write may or may not kill a process."""
    from aliasfuzz.oracle.wrapper_bounds import checked_views

    compile_fx = resolve("torch._inductor.compile_fx", "compile_fx")
    extra = {} if fusion else {"max_fusion_size": 1}
    if pipeline == "inductor-noreinplace":
        extra["disabled_passes"] = "REINPLACE_INPLACEABLE_OPS"
    hygiene.reset_program()
    with inductor_config_patch(options, extra), checked_views(stop=True):
        compiled = torch.compile(fn, backend=lambda gm, ex: compile_fx(gm, ex),
                                 dynamic=getattr(options, "dynamic", False))
        return _call(compiled, make(), names)


# -- fx-reinplace and TorchScript ---------------------------------------------------------


def _fx_stages(fn: Callable, make: Callable, names: Sequence[str]) -> list[StageRun]:
    make_fx = resolve("torch.fx.experimental.proxy_tensor", "make_fx")
    reinplace = resolve("torch.fx.passes.reinplace", "reinplace")
    from aliasfuzz.passes.tracing import trace_functional

    runs = []
    t = time.perf_counter()
    try:
        gm = make_fx(fn, tracing_mode="fake")(*make())  # as make_fx(functionalize(fn)) traces
        res = _call(gm, make(), names)
        code = gm.code
    except Exception as e:  # tracing is part of the stage
        res, code = EagerResult(error=e), ""
    runs.append(StageRun("decomposition", res, code, time.perf_counter() - t))
    t = time.perf_counter()
    try:
        gm = trace_functional(fn, make())
    except Exception as e:
        runs.append(StageRun("functionalization", EagerResult(error=e), "", time.perf_counter() - t))
        return runs
    functional = copy_graph_module(gm)
    runs.append(StageRun("functionalization", _call(functional, make(), names), functional.code,
                         time.perf_counter() - t))
    t = time.perf_counter()
    inputs = make()
    try:
        reinplace(gm, *inputs)
    except Exception as e:
        runs.append(StageRun("reinplace", EagerResult(inputs_after=inputs, error=e), "",
                             time.perf_counter() - t))
        return runs
    runs.append(StageRun("reinplace", _call(gm, make(), names), gm.code, time.perf_counter() - t))
    return runs


def _torchscript_stages(program: Any, device: str, options: Any) -> list[StageRun]:
    """TorchScript's executors as stages. TorchScript compares every call with its eager
    twin itself (state carries across calls), so each stage carries its own verdict from
    :func:`aliasfuzz.oracle.ts_invariants.judge` in ``extra["verdict"]``."""
    from aliasfuzz.oracle.ts_invariants import judge as judge_torchscript
    from aliasfuzz.passes.torchscript import run_torchscript

    ts = dict(getattr(options, "torchscript", {}) or {})
    variants = (
        ("ts-frontend", {"optimize": False}),
        ("ts-optimizer", {"fuser": False}),
        ("ts-fuser", {}),
    )
    runs = []
    for stage, over in variants:
        t = time.perf_counter()
        ex = run_torchscript(program, None, device, {**ts, **over, "other_executors": False})
        verdict, explanation = judge_torchscript(ex)
        runs.append(StageRun(stage, _ts_result(ex), "", time.perf_counter() - t,
                             {"verdict": verdict.value, "explanation": explanation}))
    return runs


def _ts_result(ex: Any) -> EagerResult:
    if ex.failure is not None:
        return EagerResult(inputs_after=ex.inputs_after,
                           error=RuntimeError(f"{ex.failure.error_type}: {ex.failure.message}"))
    return EagerResult(tuple(ex.outputs), tuple(ex.inputs_after), dict(ex.aliases))


# -- the entry point --------------------------------------------------------------------


def cut(
    pipeline: str,
    fn: Callable,
    make_inputs: Callable[[], tuple[Any, ...]],
    input_names: Sequence[str],
    *,
    options: Any = None,
    program: Any = None,
    device: str = "cpu",
    only: Sequence[str] | None = None,
    sequential_copies: bool = False,
    grads: bool = False,
) -> list[StageRun]:
    """Run ``fn`` through every prefix of ``pipeline`` (see the module docstring).

    ``sequential_copies``: the graphs of the ``functionalization`` stage and of Inductor's
    snapshots write a ``copy_`` into a destination with internal overlap as a sequential
    loop would (:func:`sequential_copy`) instead of raising ATen's overlap refusal, so that
    the stages after a write-back into an overlapping input still run (a value finding's
    cut: the write-back's own departure is its order-dependence, ``extra["order_dependent"]``,
    :func:`order_dependent_copy`; nineteenth audit 5a04852caa). A crash finding's cut keeps
    the refusal (it may be the crash).

    ``grads`` (a gradient finding's cut): every stage's run also runs the backward of the
    shared loss (:mod:`aliasfuzz.fuzz.grads`; ``StageRun.result.grads`` /
    ``grad_error``), and Inductor's snapshots cut the backward graph too: the stage that
    selects a pass's snapshot runs the forward *and* the backward graph as that pass left
    them (post_grad's passes run on both in training). ``dynamo`` and ``decomposition``
    differentiate their graphs with eager autograd, ``functionalization`` runs AOTAutograd's
    backward graph through the no-op compiler.

    ``make_inputs()`` returns fresh inputs (called once per stage); ``input_names`` name
    them in alias maps. ``program`` (the IR program) is needed for ``torchscript``.
    ``only`` names the fixed stages of :data:`PIPELINE_STAGES` to run (``<inductor>`` for
    all of Inductor's passes; None: all; not for ``torchscript`` and ``fx-reinplace``).
    Failures of torch at a stage are that stage's result (``StageRun.result.error``).
    Raises :class:`InvalidArgument` for a pipeline without stages (``eager``).
    """
    if pipeline not in PIPELINE_STAGES:
        raise InvalidArgument(f"pipeline {pipeline!r} has no stages to cut")
    from aliasfuzz.passes.pipelines import PipelineOptions

    options = options or PipelineOptions()
    hygiene.setup_process()
    # a worker dying here died in PyTorch (the snapshot glue around it is a few lines)
    token, gtoken = _SEQUENTIAL.set(sequential_copies), _GRADS.set(grads)
    try:
        with process.system_under_test(f"stages of {pipeline}"):
            return _cut(pipeline, fn, make_inputs, input_names, options, program, device, only)
    finally:
        _SEQUENTIAL.reset(token)
        _GRADS.reset(gtoken)


def _cut(
    pipeline, fn, make_inputs, input_names, options, program, device, only=None
) -> list[StageRun]:
    if pipeline == "torchscript":
        if program is None:
            raise InvalidArgument("cutting torchscript needs the program")
        return _torchscript_stages(program, device, options)
    if pipeline == "fx-reinplace":
        return _fx_stages(fn, make_inputs, input_names)
    runs: list[StageRun] = []
    for stage in PIPELINE_STAGES[pipeline]:
        if only is not None and stage not in only:
            continue
        t = time.perf_counter()
        if stage == "<inductor>":
            runs += _inductor_stages(pipeline, fn, make_inputs, input_names, options)
            continue
        if stage in ("lowering", "scheduler"):
            res = _full_inductor(pipeline, fn, make_inputs, input_names, options, stage == "scheduler")
        elif stage == "functionalization":
            res, graph, extra = _functionalization_stage(
                pipeline, fn, make_inputs, input_names, options)
            if graph is not None:
                # the graph computed eager's values (or not), the wrappers then changed them
                runs.append(StageRun(stage, graph, seconds=time.perf_counter() - t,
                                     extra={"graph_outputs": GRAPH_OUTPUTS, **extra}))
                runs.append(StageRun("aot-runtime", res, seconds=0.0))
                continue
            if extra and res.error is None:
                runs.append(StageRun(stage, res, seconds=time.perf_counter() - t, extra=extra))
                continue
        else:
            backend = {"dynamo": _dynamo_backend, "decomposition": _decomposition_backend}[stage]
            res = _compiled_stage(pipeline, backend, fn, make_inputs, input_names, options)
        if stage == "functionalization" and res.error is not None and raised_by_aot_runtime(res.error):
            # AOTAutograd traced and ran the functional graph; its runtime wrappers raised
            seconds = time.perf_counter() - t
            runs.append(StageRun(stage, EagerResult(inputs_after=res.inputs_after), seconds=seconds,
                                 extra={"graph_ran": GRAPH_RAN}))
            runs.append(StageRun("aot-runtime", res, seconds=0.0))
            continue
        runs.append(StageRun(stage, res, seconds=time.perf_counter() - t))
    return runs
