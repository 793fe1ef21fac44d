"""Blame: the stage of a pipeline that broke the program, found by cutting the pipeline.

A finding says *that* a pipeline's result departs from eager; an upstream engineer needs
to know *where*. :func:`blame` takes the program's result after every stage of the
pipeline (:func:`aliasfuzz.passes.stages.cut`: Dynamo's capture, the decompositions,
functionalization, each named Inductor pass, the reinplace pass, lowering and scheduling)
and compares each with eager under the oracle's own differential check
(:func:`aliasfuzz.oracle.differential.differential`, tolerances and fp64 shadow included):

* the **blamed stage** is the first stage of the final run of departing stages: every
  stage from it to the end departs from eager, the one before it agrees (a stage whose
  departure a later stage undoes is not the cause of what the pipeline returns);
* a later stage is blamed **too** when it introduces a departure of its own that lasts: an
  element (of an output or an input after the call) that the stage before it got right and
  the pipeline's final result still gets wrong, or an output whose aliasing the stage
  before it got right (PyTorch bugs do stack: a kernel launched with one tensor twice loses
  a write in functionalization, and the reinplace pass then erases the copy-back of the
  other argument, ``shared/audit`` 015634b84c). A departure that a later stage undoes is
  not blamed, for the same reason as above (tenth audit ac49bfc94f). ``scheduler`` is never
  blamed too after ``lowering``: the two cuts are one full Inductor compile, without and
  with fusion, so once the unfused code is wrong the fused code's further wrong elements are
  the same defect reached through other kernels (or other garbage from the same wrong
  buffer), not a second bug (H100 campaign of 2026-12-06: 62388950c1 and b64855230d, one
  user Triton kernel on a view sitting one row too far, filed once per stage with the same
  trail).

Which stage results are **conclusive** (a stage that raises where eager runs):

* for a value finding a raising stage is inconclusive (our cut may trace what the pipeline
  never traces that way), except when the error is one of ATen's memory-overlap checks
  (:data:`OVERLAP_ERRORS`, ``aten/src/ATen/MemoryOverlap.cpp``: ``assert_no_internal_overlap``,
  ``assert_no_partial_overlap``, ``assert_no_overlap``) raised by a graph a pass stage
  produced: that graph writes a buffer in place that it also reads through another
  argument, so it is not a valid program, a departure of the stage that made it (fourth
  audit 1b9297cb46, 7e27ad2854: the reinplace pass turns ``index_put(x, idx, x)`` into
  ``index_put_`` whose values alias the written buffer; run eagerly ATen refuses it,
  compiled it gives wrong values), or its storage-bounds check (:data:`BOUNDS_ERRORS`: the
  graph makes a view reaching outside its storage; twelfth audit 0374cd4bda), or a view
  past its storage that full Inductor's wrapper makes (``lowering`` and ``scheduler`` check
  every ``reinterpret_tensor`` as the judge does and stop there,
  :class:`~aliasfuzz.oracle.wrapper_bounds.OutOfBoundsView`). One kind of
  refusal does not stop a value finding's cut: a ``copy_`` (or a synthetic base's
  ``as_strided_scatter``) into a destination with internal overlap, the write-back of an
  input whose layout reaches one element twice. The stage graphs write it as a sequential
  loop would (:func:`aliasfuzz.passes.stages.sequential_copy`); the stage departs when the
  values it writes to one element differ (an order-dependent write,
  :func:`aliasfuzz.passes.stages.order_dependent_copy`) or its values
  do, and the later stages are judged on (nineteenth audit 5a04852caa: the reinplace pass's
  damage came after such a write-back, and the cut had stopped at it);
* for a crash a stage raising the finding's own error departs; one raising *another*
  error departs only when the stage is a **faithful prefix** of the pipeline
  (:data:`FAITHFUL`: Dynamo's capture, AOTAutograd's functionalization and epilogues as
  the pipeline calls them, the graph ``compile_fx`` hands its inner compiler, full
  Inductor): the pipeline itself runs that code first, so on a program eager runs it is
  broken there already, whatever a later stage then does with the broken state (fourth
  audit 69f02e9212 and 8be8a9c905: functionalization's ``setStorage ... out of bounds``,
  after which full Inductor corrupts the heap). Our own constructions are not faithful
  prefixes: the ``decomposition`` cut (``make_fx`` without functionalization, which no
  pipeline runs) and the snapshots of Inductor's passes run eagerly can fail where the
  pipeline does not (second audit: our decomposition cut's ``IndexError`` blamed three
  functionalization crashes on decomposition), so their other errors stay inconclusive;
  the trail says ``the final pipeline's error differs`` for a faithful one.

A **signal death** of a pipeline ending in full Inductor (``lowering``, ``scheduler``)
would kill the cutting process as well when the cut reaches those stages.
:func:`blame_program` therefore runs the prefix first, with the pipeline itself standing
in as the last stage (its result is the finding, :class:`WorkerDied`): when the blamed
stage is in the prefix (a faithful prefix raised, and every conclusive stage after it
departs too) the compiled stages are not run (the trail says ``not run``). What is not
checked then: whether ``lowering`` (fusion off) would agree with eager, which would move
the blame to ``scheduler``; a pipeline already broken by its own prefix is reported there
first. Otherwise the compiled stages, and the controls below, each run in a **child
interpreter** (:class:`_Isolation`, :mod:`aliasfuzz.fuzz.isolated`): a child's death is
that stage's answer, and a stage that survives must agree three times to agree (heap
corruption does not kill every run). A cut that killed its campaign worker all the same
(a value finding whose compiled code corrupts the heap: twelfth audit 0374cd4bda) is run
again with every stage in a child (``isolate``, :func:`aliasfuzz.campaign.pool.blame_in`).

**Views past their storage** (a finding of check ``out-of-bounds``,
:mod:`aliasfuzz.oracle.wrapper_bounds`): ``lowering`` and ``scheduler`` check every view
their wrapper makes and stop there, as the judge does, so such a finding is cut in this
process, deterministically; the first stage whose wrapper makes the view is blamed. The
heap-checked cut of signal deaths had blamed ``lowering``, or split a relayout of one bug
over ``lowering`` and ``scheduler`` (fresh user 29, c711f5d641). The stages before full
Inductor are judged by their values: a graph whose fake tensors disagree with eager's
layouts is not blamed for that alone (thirtieth audit: the offset-0 base of
5fcbc5cdc0's ``slice_scatter`` comes from FakeTensor's dispatch cache, which rebuilds a cached
output without its storage offset; uncached, the graph is consistent and Inductor's
``as_strided`` lowering, which rebases storage offsets for graph inputs only, makes the
view past its buffer).

**Pass-off control** (:func:`pass_off`, Inductor's pipelines, a value finding or a raised
crash blamed on one of Inductor's FX passes or on ``aot``, a signal death in child
interpreters; not a timeout): the pipeline is run again with the
blamed pass disabled (``torch._inductor.config.disabled_passes``, the
``GraphTransformObserver`` name). A
snapshot run eagerly can look right after a pass whose damage only a later pass exposes
(fifth audit 2be6c01096: ``remove_noop_ops`` drops a full-range ``slice_scatter`` whose
snapshot still agrees, the reinplace pass then writes the input): when the pipeline still
departs with the blamed pass off, each other pass that changed the graph (in pipeline
order, at most :data:`_MAX_CONTROLS`; passes that only reorder nodes, :data:`_REORDERS`,
last) is disabled in turn, and the first whose control agrees with eager takes the blame (a
reorder pass's agreeing control leaves the cut's blame standing: it only exposes it).
The same search runs for a finding blamed on ``aot`` (the graph ``compile_fx`` receives,
run eagerly). Crashes are checked too (tenth audit a646b390df: the reinplace pass
reinplaces a ``diagonal_scatter`` whose result a custom op then mutates, and an
``index_add(out=)`` after the graph break trips ATen's overlap check; the pass's own
control agrees). The ``aot`` snapshot and those before the reinplace pass run
``auto_functionalized`` as ``aot_eager`` does (:func:`aliasfuzz.passes.stages._runnable`):
run through Inductor's decomposition, traced on fake layouts, they departed where
``aot_eager`` agrees (a646b390df, ac49bfc94f, ff33ae0a1b). When no
control agrees, or the blamed pass's own control raises, the cut's blame stands and the
trail says so. When the blamed pass's own control agrees, an earlier ``remove_noop_ops`` that
changed the graph is disabled too (:data:`_ALSO_TRIED`): if that also agrees, the trail
(``also-fixed-by``) and the repro's notes say both passes take part (audit 38); the blame
stays.

**Stacked stages** (:func:`stacked_pass_off`, a value finding of an Inductor pipeline whose
cut blames a later Inductor pass too): the pipeline is run with that pass disabled; when its
result is unchanged, the pass's departure in the cut is not a root cause of its own and the
stage is dropped (audit 55, 2be6c01096).

**Static-shapes control** (:func:`static_shapes`): a blamed finding of a program compiled
with dynamic shapes is run again with ``dynamic=False``; the trail says whether it needs
symbolic sizes (audit 53, 0fe554f63b).

**Exposing-pass control** (:func:`order_exposed`, Inductor's pipelines): a stage that is
not an Inductor pass and departs only by an order-dependent write (its graph, run eagerly,
gives eager's values) keeps the blame, and the passes after it are disabled in turn (reorder
passes first) to name the one that makes Inductor's write order differ (``exposed-by``;
audit 53, f132a3c672: ``reorder_for_locality``).

**Donated-buffer control** (:func:`donated_buffer`, a finding of a program whose inputs
require grad, blamed on ``lowering`` or ``scheduler`` of an Inductor pipeline that ran the
backward before comparing, after the scalar-codegen control): the pipeline is compiled again
with ``torch._functorch.config.donated_buffer = False``. When that agrees with eager, the
compiled backward's reuse of a saved tensor's buffer (AOTAutograd's ``bw_donated_idxs``,
``collect_bw_donated_buffer_idxs`` in ``torch/_functorch/_aot_autograd/graph_compile.py``,
judged on the functional graph; Inductor's ``DonatedBuffer``) is the defect, blamed as
:data:`DONATED_BUFFER` (audit 48, 56183486c8: the forward, reinplaced, saves the input's own
buffer for backward; the backward writes the gradient into it; the forward alone agrees).

**Dynamo-rewrite check** (:func:`dynamo_rewrite`, a finding blamed on ``lowering`` or
``scheduler`` of an Inductor pipeline whose program calls a method Dynamo itself rewrites,
:data:`DYNAMO_REWRITES`): the pipeline is compiled again with
``torch._dynamo.config.enable_dynamo_decompositions = False``. When that agrees with eager,
the trail says so (:data:`ENABLED_BY_DYNAMO`) and the repro's notes name the rewrite; the
blame stands, Dynamo's graph running right eagerly (audit 48, baa68a8925: Dynamo turns
``addcmul_(a, b, value=v)`` into ``mul`` + ``inductor_prims.fma`` + ``copy_``, and Inductor's
``fma`` lowering computes an int8 ``fma`` in float32).

**Reinplace-off check** (:func:`enabled_by_reinplace`, a finding blamed on ``lowering`` or
``scheduler`` of an Inductor pipeline with the reinplace pass on, after the scalar-codegen
control): the pipeline is compiled again with the reinplace pass disabled; when that agrees
with eager, the trail says so (``enabled-by``) and the repro's notes name the pass. The
blame stands: the pass's own graph ran right eagerly (audit 38, 0a4e0624e7).

**Scalar-codegen control** (:func:`scalar_codegen`, a CPU program blamed on ``lowering`` or
``scheduler``, crash or value finding): the pipeline is compiled again with
``cpp.simdlen=1``. When that agrees with eager, the defect is Inductor's vectorized C++
codegen (``CppVecKernel``), blamed as :data:`CPP_VECTORIZED` (seventh audit 64c59fd440: an
assert in ``CppVecKernel.store``, filed as ``lowering``). The pass-off control is not run
then.

**Where in Inductor** (:data:`RAISED_IN`, :attr:`Blame.component`): ``lowering`` and
``scheduler`` are full Inductor (fusion off, then on), so a crash blamed there may have been
raised by lowering, by the scheduler, by codegen or by the compile of the generated code.
The innermost Inductor frame of the blamed stage's error
(:func:`aliasfuzz.passes.stages.inductor_component`; a child interpreter's error keeps its
frames, :func:`aliasfuzz.fuzz.isolated.raise_frames`) names that component in the trail
(``raised-in``: ``scheduler (torch/_inductor/scheduler.py:compute_ancestors)``) and in the
repro's notes. The stage itself is not renamed: finding ids and the corpus's dedupe key on
it, and it says what the cut separated (audit 22 88f92dc7f4: ``KeyError: 'op1'`` raised by
``Scheduler.compute_ancestors`` with fusion off and on, filed as ``lowering``).

**AOTAutograd's runtime wrappers** (``aot-runtime``): when the ``functionalization`` stage
raises from the code AOTAutograd wraps around its functional graph at run time (synthetic
bases, the replay of outputs that alias inputs, input-mutation epilogues:
:func:`aliasfuzz.passes.stages.raised_by_aot_runtime`), after the graph itself ran, the cut
reports two stages: ``functionalization`` agrees for a crash finding (its graph traced and
ran) and ``aot-runtime`` raises (thirteenth audit 63f507a08e: ``torch.func.functionalize``
alone runs the program right; ``gen_alias_from_base`` raises replaying a returned view).
For a value finding that stage is inconclusive. The wrappers' *values* are split off too:
the cut keeps the functional graph's own user outputs, and when the wrappers returned an
output of other values (they regenerate outputs that alias inputs from their bases,
replaying view metas, through synthetic bases), ``functionalization`` is judged on the
graph's values and ``aot-runtime`` on what the pipeline returned
(:func:`aliasfuzz.passes.stages._graph_view`; audits 17a/18a 38cdfbf453, dbca3549f9,
PyTorch #198095: the graph returns ``b[3]`` right, its replay on the synthetic base of
``a = s[0:1]``, ``b = s[0::2]`` loses ``b``'s stride). Inputs after the call are not split
that way (the wrappers' copy-back of mutated inputs is not observed apart from the graph).

**Views of an intermediate left to the backend** (an ``aliasing`` finding): eager returns
two outputs on one storage that no input shares (views of one intermediate) and the
pipeline returns them apart. Every stage run eagerly keeps the views, so the cut alone
blamed ``lowering``, while the cause is AOTAutograd's output metadata: without grad it has
both outputs fresh (``non_alias``) and leaves their aliasing to the backend (audit 52,
1e3744d1cf; PyTorch #191449's class). The ``functionalization`` stage and the Inductor
snapshots observe it (:func:`aliasfuzz.passes.stages.fresh_outputs_sharing`: outputs at
positions the metadata has fresh sharing a storage as the graph runs); for an ``aliasing``
finding whose final result lost sharing between outputs (:func:`lost_output_sharing`) that
observation is the stage's departure, so the blame is ``functionalization``'s.

Findings that are claims about a decision of the reinplace pass (``unsafe-reinplace``,
``missed-reinplace`` from the candidates check) are the pass's by construction: their
stage is ``reinplace`` without cutting. A ``missed-reinplace`` of check ``witness`` (an
equivalent spelling that moves fewer bytes, :mod:`aliasfuzz.oracle.witness`) is not cut:
its values are eager's at every stage. Its cost controls (:func:`cost_pass_off`) name the
pass whose control makes the code as lean as the witness; with none, no stage is named
(:data:`COST_NOT_CUT`). Neither
does a finding of check ``grads`` of TorchScript or ``fx-reinplace`` (:data:`GRADS_NOT_CUT`:
their cuts see forward graphs only). On AOTAutograd's pipelines a gradient finding is cut
with its backward graph (:func:`aliasfuzz.passes.stages.cut`'s ``grads``): every stage runs
the backward of the shared loss too, and a stage that selects an Inductor pass's snapshot
runs both the forward and the backward graph as that pass left them; the gradients are
compared like values (the ``grads`` check). Mapping
to the audit's stage labels (``shared/audit/labels.tsv``) is :data:`AUDIT_STAGES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.fuzz.grads import has_grad_inputs
from aliasfuzz.fuzz.isolated import exception_chain
from aliasfuzz.oracle.differential import differential, tolerance

# the stage named when a finding blamed on ``decomposition`` departs the same way when
# traced to ATen with nothing decomposed in Python (:func:`aten_trace_control`)
from aliasfuzz.passes.stages import ATEN_TRACE

__all__ = [
    "ATEN_TRACE", "AUDIT_STAGES", "BOUNDS_ERRORS", "COST_CONTROLS", "COST_NOT_CUT", "CPP_VECTORIZED", "DONATED_BUFFER",
    "FAITHFUL", "GRADS_NOT_CUT",
    "NOT_REPRODUCED",
    "OVERLAP_ERRORS", "RAISED_IN", "SYNTHETIC_BASE", "Blame",
    "REORDER_ONLY", "ChildDied", "KilledFromOutside", "WorkerDied", "adds_departure",
    "ALSO_FIXED_BY", "EXPOSED_BY", "STATIC_SHAPES", "order_exposed", "stacked_pass_off",
    "static_shapes", "DYNAMO_REWRITES", "lost_output_sharing", "ENABLED_BY", "ERROR_GONE", "ENABLED_BY_DYNAMO", "aten_trace_control", "blame", "donated_buffer", "dynamo_rewrite", "enabled_by_reinplace",
    "pass_name",
    "pass_off",
    "scalar_codegen",
]

#: The audit's stage label -> the stages of this vocabulary it names (see
#: :mod:`aliasfuzz.passes.stages`): the audit names the stage by the component that
#: holds the defect, we by the prefix of the pipeline whose result first departs.
AUDIT_STAGES: dict[str, tuple[str, ...]] = {
    "aot-decomposition": ("decomposition",),
    "functionalization": ("functionalization",),
    "functionalization+reinplace": ("functionalization", "reinplace"),
    "reinplace": ("reinplace",),
    "reinplace-heuristics": ("reinplace",),  # a declined candidate: the pass's decision
    "scheduler": ("scheduler",),
    # Dynamo rewrites addcmul_ into ops that are exact in eager; the value departs where
    # Inductor lowers them to a float fma, with or without fusion
    "dynamo+lowering": ("lowering",),
    "remove_noop_ops": ("joint:remove_noop_ops", "post-grad:remove_noop_ops"),
}

#: The messages of ATen's memory-overlap checks (``aten/src/ATen/MemoryOverlap.cpp``:
#: ``assert_no_internal_overlap``; ``assert_no_partial_overlap`` and ``assert_no_overlap``
#: share one message; ``torch/_meta_registrations.py`` mirrors the first at trace time),
#: torch 2.11 and 2.13.
OVERLAP_ERRORS = re.compile(
    r"(more than one element of the written-to tensor|some elements of the input tensor and "
    r"the written-to tensor) refers? to a single memory location"
)
#: ATen's refusal of a view that reaches outside its storage
#: (``aten/src/ATen/native/Resize.h``, ``checkInBoundsForStorage``): a graph a stage produced
#: that raises it reads or writes memory the program does not own, so it is not a valid
#: program either, a departure for any finding (twelfth audit 0374cd4bda: functionalization
#: replays a view with a stale storage offset; run eagerly ATen refuses it, Inductor's code
#: writes out of bounds and gives wrong values).
BOUNDS_ERRORS = re.compile(r"setStorage: .* out of bounds for storage of size")

#: Stages whose run is the pipeline's own code up to that point (see the module
#: docstring); per pipeline, since ``reinplace`` is all of ``fx-reinplace`` but a snapshot
#: run eagerly in Inductor's pipelines.
FAITHFUL: dict[str, tuple[str, ...]] = {
    "fx-reinplace": ("functionalization", "reinplace"),
    "*": ("dynamo", "functionalization", "aot-runtime", "aot", "lowering", "scheduler"),
}

#: Stages built by aliasfuzz alone (no pipeline runs them): no error of theirs is a
#: conclusive departure except the finding's own.
_OWN = ("decomposition", ATEN_TRACE)

#: Verdicts decided by the reinplace pass's own decisions (no cut needed).
_CLAIMS = ("unsafe-reinplace", "missed-reinplace")


@dataclass
class Blame:
    """Where a finding's pipeline broke.

    ``stage``: the blamed stage (None when no cut reproduces the finding: ``reason`` says
    why); ``stages``: every blamed stage, ``stage`` first; ``trail``: one
    ``(stage, what happened)`` pair per stage run, in pipeline order, for the report (and
    the controls', and :data:`RAISED_IN`'s); ``component``: for a crash blamed on full
    Inductor (``lowering``, ``scheduler``), the part of Inductor that raised it
    (:func:`aliasfuzz.passes.stages.inductor_component`: ``scheduler``, ``lowering``,
    ``codegen``, ...), else None; ``moved_from``: when the pass-off control moved the
    blame to ``stage`` (:func:`pass_off`), the stage the cut had blamed, else None;
    ``own_off``: with ``moved_from``, whether disabling that stage's own pass was tried
    and still departed (False for a cut that blamed ``aot``, which has no pass of its own).
    The trail says the same in words; readers take these fields, not the words.
    """

    stage: str | None
    stages: tuple[str, ...] = ()
    trail: list[tuple[str, str]] = field(default_factory=list)
    reason: str = ""
    component: str | None = None
    moved_from: str | None = None
    own_off: bool = False

    def to_json(self) -> dict[str, Any]:
        """The blame as the worker returns it (``moved_by_pass_off``: ``{"cut",
        "own_off"}`` or None, the meta key of that name, ``corpus/README.md``)."""
        moved = {"cut": self.moved_from, "own_off": self.own_off} if self.moved_from else None
        return {"stage": self.stage, "stages": list(self.stages),
                "trail": [list(t) for t in self.trail], "reason": self.reason,
                "component": self.component, "moved_by_pass_off": moved}


def _mismatch(e: Any, c: Any) -> torch.Tensor | bool:
    """Element mask of where ``c`` departs from ``e`` (True: the whole value departs)."""
    if not (isinstance(e, torch.Tensor) and isinstance(c, torch.Tensor)):
        return bool(e != c) if not isinstance(e, torch.Tensor) and not isinstance(c, torch.Tensor) else True
    if e.shape != c.shape or e.dtype != c.dtype:
        return True
    e_, c_ = e.detach().cpu(), c.detach().cpu()
    if e_.is_floating_point() or e_.is_complex():
        rtol, atol = tolerance(e_.dtype)
        return ~torch.isclose(c_, e_, rtol=rtol, atol=atol, equal_nan=True)
    return c_ != e_


def _new_departure(prev: Any, cur: Any) -> bool:
    """Whether mask ``cur`` marks an element that mask ``prev`` does not (a mask is a
    bool tensor, or a bool for a value that departs as a whole or not at all)."""
    def every(m: Any) -> bool:
        return bool(m) if isinstance(m, bool) else bool(m.all())

    def some(m: Any) -> bool:
        return bool(m) if isinstance(m, bool) else bool(m.any())

    if not some(cur) or every(prev):
        return False
    if isinstance(cur, bool) or isinstance(prev, bool) or prev.shape != cur.shape:
        return True
    return bool((cur & ~prev).any())


def _lasts(prev: Any, cur: Any, last: Any) -> bool:
    """Whether an element that mask ``cur`` marks and ``prev`` does not still departs in
    the pipeline's final result (mask ``last``): a stage's own departure that a later stage
    undoes is not a bug of what the pipeline returns (tenth audit ac49bfc94f: the graph
    ``compile_fx`` receives, run eagerly, zeroes an element that functionalization and every
    later stage get right; it was filed as a stacked ``aot`` bug)."""
    if isinstance(last, bool):
        return last
    if isinstance(cur, bool) or (not isinstance(prev, bool) and prev.shape != cur.shape):
        return bool(last.any())
    if cur.shape != last.shape:
        return bool(last.any())
    new = cur if isinstance(prev, bool) else cur & ~prev
    return bool((new & last).any())


def _masks(eager: EagerResult, res: EagerResult) -> list[Any]:
    vals = list(zip(eager.outputs, res.outputs, strict=False))
    vals += list(zip(eager.inputs_after, res.inputs_after, strict=False))
    masks: list[Any] = [_mismatch(e, c) for e, c in vals]
    if len(eager.outputs) != len(res.outputs):
        masks.append(True)
    masks += [eager.aliases.get(k) != res.aliases.get(k) for k in sorted(eager.aliases)]
    return masks


def adds_departure(eager: EagerResult, before: EagerResult, after: EagerResult) -> bool:
    """Whether ``after`` departs from ``eager`` somewhere ``before`` does not (an element of
    an output or of an input after the call, or an output's aliasing): the rule that blames
    a later stage of a stacked bug, used by the unsafe-reinplace confirmation too."""
    prev, cur = _masks(eager, before), _masks(eager, after)
    if len(prev) != len(cur):
        return True
    return any(_new_departure(p, c) for p, c in zip(prev, cur, strict=True))


def lost_output_sharing(eager: EagerResult, res: EagerResult, names: Sequence[str]) -> bool:
    """Whether ``res`` returns apart two outputs that eager returns on one storage shared by
    no input (views of one intermediate): some output whose eager alias set names outputs
    only (no name of ``names``, the inputs: :func:`aliasfuzz.fuzz.eager.alias_map`) and
    whose set in ``res`` lacks one of them. The finding the intermediate-base observation
    (:func:`aliasfuzz.passes.stages.fresh_outputs_sharing`) explains; an output that is a
    view of an input in eager (AOTAutograd's ``alias_of_input``) is another contract."""
    if res.error is not None:
        return False
    for k, shared in eager.aliases.items():
        if shared and not set(shared) & set(names) and \
                not set(shared) <= set(res.aliases.get(k, ())):
            return True
    return False


def _describe(e: BaseException) -> str:
    """``Type: first line`` of ``e``, and of the innermost exception of its chain when that
    is another one (a wrapper such as ``BackendCompilerFailed`` says ``raised:`` on its first
    line and the error itself below)."""
    def one(x: BaseException) -> str:
        text = str(x).strip()
        return f"{type(x).__name__}: {text.splitlines()[0][:200] if text else ''}"

    inner = exception_chain(e)[-1]
    if inner is e:
        # Dynamo's fake-tensor wrapper keeps the error it caught in its message only, not in
        # the chain (fresh user 51's B5: every such crash read "RuntimeError when making fake
        # tensor call", and unrelated ones shared one root key)
        got = _FAKE_TENSOR_GOT.search(str(e))
        return one(e) if got is None else f"{one(e)} <- {got['type']}: {got['msg'][:200]}"
    return f"{one(e)} <- {one(inner)}"


#: The error Dynamo caught running an FX node on fake tensors, in its TorchRuntimeError's
#: message (``torch/_dynamo/utils.py`` ``get_fake_value``: "Dynamo failed to run FX node
#: with fake tensors: call_function ...: got RuntimeError('Cannot call numel() ...\\n...')").
_FAKE_TENSOR_GOT = re.compile(
    r"Dynamo failed to run FX node with fake tensors: .*?\): got (?P<type>\w+)\((?P<q>['\"])"
    r"(?P<msg>.*?)(?:\\n|\n|(?P=q)\))", re.S)


def departure(
    pipeline: str, eager: EagerResult, res: EagerResult, names: Sequence[str],
    shadow: Callable[[], EagerResult | None] | None = None,
) -> str | None:
    """Why stage result ``res`` departs from ``eager`` (None: it agrees), by the checks a
    finding of ``pipeline`` would fail (waived checks are waived here too)."""
    from aliasfuzz.oracle.judge import WAIVED

    if res.error is not None and eager.error is None:
        return f"raises {_describe(res.error)}"
    waived = WAIVED.get(pipeline, {})
    for c in differential(eager, res, names, shadow=shadow):
        if not c.passed and c.name not in waived:
            return f"{c.name}: {c.message}"
    return None


#: The reason of a blame that found no departing stage (the finding did not reproduce
#: stage by stage); the campaign does not write a signal death with this reason.
NOT_REPRODUCED = ("no cut of the pipeline departs from eager "
                  "(the finding did not reproduce stage by stage)")

#: Why a ``missed-reinplace`` of check ``witness`` names no stage: it is a claim about the
#: bytes Inductor's generated code moves, with eager's values at every stage, so cutting
#: by values cannot place it (not built: a cost cut, compiling each stage's graph through
#: the rest of the pipeline with and without the witness spelling).
COST_NOT_CUT = ("a cost finding (an equivalent spelling moves fewer bytes): every stage "
                "keeps eager's values, and stages are cut by values, not by bytes (a cost "
                "cut is not built), so no stage is named")

#: Why a finding of check ``grads`` (gradients departing, or a backward crashing) of a
#: pipeline outside :data:`_GRADS_CUT` names no stage: its cut (TorchScript's executors,
#: ``torch.fx.passes.reinplace`` on a forward trace) observes forward stages only.
GRADS_NOT_CUT = ("a gradient finding of a pipeline whose cut observes forward stages only "
                 "(no backward graph is cut stage by stage), so no stage is named")
#: Pipelines whose cut runs backward graphs (:func:`aliasfuzz.passes.stages.cut`'s ``grads``).
_GRADS_CUT = ("aot_eager", "inductor", "inductor-noreinplace", "inductor-reinplace")

#: Checks a backward can change: what the harness compares after a program's backward ran
_AFTER_BACKWARD = ("values", "inputs")


class WorkerDied(Exception):
    """The result of a stage not run because the finding shows that it kills the process
    (a signal death of the pipeline itself): it is the finding's own error."""


#: The stages that are the pipeline's own compile (full Inductor): a signal death of the
#: pipeline happens there, so the cut runs them last and only when needed.
_COMPILED = ("lowering", "scheduler")


def _same_error(e: BaseException, finding: str) -> bool:
    """Whether a stage's exception ``e`` can be the crash a finding's explanation
    (``finding``) reports: an exception of its chain (``__cause__``/``__context__``) whose
    type is named there and whose message starts as a message there does (types alone
    are too coarse: our decomposition cut's ``AssertionError: sources must not be empty``
    is not AOTAutograd's ``AssertionError: incorrect out shape``). A wrapper such as
    ``BackendCompilerFailed`` carries the error it wraps in its chain."""
    from aliasfuzz.oracle.wrapper_bounds import OutOfBoundsView

    for x in exception_chain(e):
        if isinstance(x, WorkerDied):
            return True
        name = type(x).__name__
        # a view past its storage: the finding's explanation names the view, not always the
        # exception (oracle.heap.out_of_bounds), and its message is specific enough
        if not isinstance(x, OutOfBoundsView) and not re.search(rf"\b{re.escape(name)}\b", finding):
            continue
        head = str(x).strip().splitlines()[0][:20] if str(x).strip() else ""
        if not head or head in finding:
            return True
    return False


def _overlap(e: BaseException) -> bool:
    """Whether ``e`` (or an exception of its chain) is one of ATen's overlap refusals or its
    storage-bounds refusal (:data:`OVERLAP_ERRORS`, :data:`BOUNDS_ERRORS`), or a view past
    its storage that Inductor's wrapper made
    (:class:`~aliasfuzz.oracle.wrapper_bounds.OutOfBoundsView`: the ``lowering`` and
    ``scheduler`` stages check them, :func:`aliasfuzz.passes.stages._full_inductor`)."""
    from aliasfuzz.oracle.wrapper_bounds import OutOfBoundsView

    return any(isinstance(x, OutOfBoundsView) or OVERLAP_ERRORS.search(str(x))
               or BOUNDS_ERRORS.search(str(x)) for x in exception_chain(e))


def _raising_verdict(
    pipeline: str, stage: str, e: BaseException, crash: bool, error: str | None
) -> str | None:
    """For a stage that raised ``e``: None when that is a conclusive departure, else why
    it is inconclusive (the rules of the module docstring)."""
    if stage in _OWN:
        if crash and (not error or _same_error(e, error)):
            return None
        return "not the finding's error" if crash else "a stage of our own construction"
    if _overlap(e):
        return None  # the stage's graph is not a valid program (MemoryOverlap.cpp)
    if not crash:
        return "a raising stage says nothing about the values"
    if not error or _same_error(e, error):
        return None
    if stage in FAITHFUL.get(pipeline, FAITHFUL["*"]):
        return None
    return "not the finding's error"


def blame(
    pipeline: str,
    verdict: str,
    check: str | None,
    eager: EagerResult,
    runs: Sequence[Any],
    names: Sequence[str],
    shadow: Callable[[], EagerResult | None] | None = None,
    error: str | None = None,
) -> Blame:
    """Blame a finding (``verdict``/``check`` on ``pipeline``) on the stages of ``runs``.

    ``error`` is a crash finding's explanation (what the pipeline raised): a stage that
    raises an exception of a type it does not name departs only when the stage is a
    faithful prefix of the pipeline (:data:`FAITHFUL`); elsewhere (our own cut can fail
    where the pipeline does not) it is inconclusive. A stage raising one of ATen's
    overlap refusals (:data:`OVERLAP_ERRORS`) departs for any finding, unless it is our own
    ``decomposition`` cut.

    ``runs`` are :class:`aliasfuzz.passes.stages.StageRun` in pipeline order, ``eager``
    the reference on fresh inputs, ``names`` the input names, ``shadow`` the fp64 run
    (see :func:`aliasfuzz.oracle.differential.differential`). TorchScript stages carry
    their own verdict (``run.extra["verdict"]``). See the module docstring for the rule.
    """
    if verdict in _CLAIMS and check == "candidates":
        return Blame("reinplace", ("reinplace",), [("reinplace", f"decision: {verdict}")])
    trail: list[tuple[str, str]] = []
    kept: list[tuple[Any, list[Any]]] = []  # conclusive stages: (run, departure masks or None)
    crash = verdict in ("crash", "timeout")
    # the pipeline's own result returns apart outputs eager shares: what makes a stage's
    # intermediate-base observation a departure (module docstring)
    lost = check == "aliasing" and bool(runs) and lost_output_sharing(eager, runs[-1].result, names)
    for r in runs:
        if "verdict" in r.extra:  # torchscript: the stage judged itself call by call
            # only this finding's verdict is a departure: a stage that breaks a graph
            # invariant does not show a miscompile that appears at a later stage
            v = r.extra["verdict"]
            why = None if v != verdict else f"{v}: {r.extra.get('explanation', '')[:200]}"
            inconclusive = v in ("invalid-program", "unknown", "unsupported")
            if why is None and v not in ("ok", verdict) and not inconclusive:
                trail.append((r.stage, f"agrees for this finding (it is {v} there)"))
                kept.append((r, None))
                continue
        elif "graph_ran" in r.extra:  # AOTAutograd's wrappers raised after the graph ran
            if crash:
                trail.append((r.stage, f"agrees ({r.extra['graph_ran']})"))
                kept.append((r, None))
            else:  # its values are not observed apart from the wrappers
                trail.append((r.stage, f"inconclusive ({r.extra['graph_ran']})"))
            continue
        else:
            why = departure(pipeline, eager, r.result, names, shadow)
            if not crash and r.extra.get("order_dependent"):
                # the stage's graph has no single meaning: its agreeing values are luck,
                # and departing ones may be the write order's (nineteenth audit 5a04852caa)
                od = f"order-dependent write: {r.extra['order_dependent']}"
                why = od if why is None else f"{why}; {od}"
            if r.extra.get("fresh_output_alias"):
                # the graph hands the caller an input's storage as a fresh tensor: a departure
                # whatever the finding, since later graphs and the caller see the alias
                # without its ._base (audit 21 finding 5, passes.stages
                # fresh_output_aliasing_input)
                fa = f"aliasing: {r.extra['fresh_output_alias']}"
                why = fa if why is None else f"{why}; {fa}"
            if why is not None and r.extra.get("output_types") and why.startswith("aliasing: "):
                # the functional graph cannot return an input's alias: the runtime wrappers
                # regenerate one only where the metadata classified the output so (audit
                # 56, 0e76bd01f8: set_ onto a mutated input, classified non_alias)
                from aliasfuzz.passes.stages import output_metadata_note

                note = output_metadata_note(r.extra["output_types"], why)
                why = why if note is None else f"{why}; {note}"
            if r.extra.get("intermediate_alias") and lost:
                # AOTAutograd handed two views of one intermediate to the backend as fresh
                # outputs, and the pipeline returns them apart: the graph's own values and
                # aliasing agree, its metadata is the departure (audit 52, 1e3744d1cf)
                ia = f"aliasing: {r.extra['intermediate_alias']}"
                why = ia if why is None else f"{why}; {ia}"
            inconclusive = False
            if r.result.error is not None and eager.error is None:
                weak = _raising_verdict(pipeline, r.stage, r.result.error, crash, error)
                if weak is not None:
                    inconclusive = True
                    why = f"{why}; {weak}" if crash else why
                elif crash and error and not _same_error(r.result.error, error):
                    why = f"{why}; the final pipeline's error differs"
        if inconclusive:
            # said whose error it is: "inconclusive (raises TypeError ...)" read as an
            # error of aliasfuzz's own, unreported (fresh user 33)
            trail.append((r.stage, f"inconclusive ({why}): the cut of this stage raised where "
                                   "eager runs, which the pipeline itself need not (not read "
                                   "as a departure)"))
            continue
        said = "agrees" if why is None else f"departs ({why})"
        if "graph_outputs" in r.extra:  # the functional graph's own values (stages.py)
            said += f" [{r.extra['graph_outputs']}]"
        trail.append((r.stage, said))
        mask = None
        if why is not None:
            agrees = why.startswith(("order-dependent write", "aliasing: "))
            mask = _masks(eager, r.result) if r.result.error is None and not agrees else [True]
        kept.append((r, mask))
    if not kept or kept[-1][1] is None:
        return Blame(None, (), trail, NOT_REPRODUCED)
    first = len(kept) - 1
    while first > 0 and kept[first - 1][1] is not None:
        first -= 1
    stages = [kept[first][0].stage]
    last = kept[-1][1]
    for k in range(first + 1, len(kept)):
        prev, cur = kept[k - 1][1], kept[k][1]
        if (kept[k - 1][0].stage, kept[k][0].stage) == ("lowering", "scheduler"):
            continue  # one compile without and with fusion (module docstring)
        if len(cur) == len(prev) and any(
            _new_departure(p, c) and (len(last) != len(cur) or _lasts(p, c, last[i]))
            for i, (p, c) in enumerate(zip(prev, cur, strict=True))
        ):
            stages.append(kept[k][0].stage)
    component = _raised_in(kept[first][0], trail)
    return Blame(stages[0], tuple(stages), trail, component=component)


#: The trail's name for where in Inductor a crash blamed on ``lowering`` or ``scheduler``
#: was raised (:func:`_raised_in`); its entry reads ``scheduler
#: (torch/_inductor/scheduler.py:compute_ancestors)``.
RAISED_IN = "raised-in"
#: A ``raised-in`` entry's words for an error AOTAutograd raised handling graph inputs that
#: alias one another with one of them mutated (:func:`aliasfuzz.passes.stages.
#: synthetic_base_frame`): it traces the graph over one synthetic base and regenerates each
#: input as a view of it.
SYNTHETIC_BASE = "AOTAutograd's synthetic base of aliased graph inputs"
#: AOTAutograd's stages of a cut, whose errors may come from its synthetic-base handling.
_AOT_STAGES = ("functionalization", "aot", "aot-runtime", "decomposition")


def _raised_in(run: Any, trail: list[tuple[str, str]]) -> str | None:
    """The Inductor component (:func:`aliasfuzz.passes.stages.inductor_component`) that
    raised blamed stage ``run``'s error, when that stage is full Inductor
    (:data:`_COMPILED`); noted in ``trail`` as :data:`RAISED_IN`. The stage name stays
    (finding ids and the corpus's dedupe use it; it is what our cut can separate: fusion
    off or on): the component tells the engineer which part of the compile to read (audit
    22 88f92dc7f4, ``lowering`` whose ``KeyError`` the scheduler raised)."""
    from aliasfuzz.passes.stages import inductor_component, synthetic_base_frame

    error = run.result.error
    if error is None or isinstance(error, WorkerDied):
        return None
    if run.stage in _AOT_STAGES:
        frame = synthetic_base_frame(error)
        if frame is not None:  # audit 46, ddd5e9100d: not the functionalization of an op
            trail.append((RAISED_IN, f"{SYNTHETIC_BASE} ({frame})"))
        return None
    if run.stage not in _COMPILED:
        return None
    site = inductor_component(error)
    if site is None:
        return None
    trail.append((RAISED_IN, f"{site[0]} ({site[1]})"))
    return site[0]


def blame_program(
    program: Any, pipeline: str, verdict: str, check: str | None,
    device: str = "cpu", options: Any = None, error: str | None = None,
    isolate: bool = False, said: str | None = None,
) -> Blame:
    """:func:`blame` for an IR program: eager on fresh inputs, then every cut of
    ``pipeline`` (:func:`aliasfuzz.passes.stages.cut`) on fresh inputs each; a cost
    finding of check ``witness`` is asked of :func:`cost_pass_off` instead, with ``said``,
    its explanation (the witness's bytes).

    ``isolate``: run every stage of the cut and every control in a child interpreter
    (:class:`_Isolation`; the campaign asks for it when a cut in one process killed its
    worker). A signal death of the pipeline (``check`` ``signal:...``) always runs its
    compiled stages and its controls that way. Raises
    :class:`~aliasfuzz.errors.InvalidArgument` for a pipeline without stages."""
    from aliasfuzz.oracle.judge import _options, _shadow
    from aliasfuzz.passes.stages import PIPELINE_STAGES, StageRun, cut

    if verdict in _CLAIMS and check == "candidates":
        return blame(pipeline, verdict, check, EagerResult(), [], [])
    if verdict == "missed-reinplace" and check == "witness":
        return cost_pass_off(program, pipeline, device, _options(options), said or "")
    grads = check == "grads"
    if grads and pipeline not in _GRADS_CUT:
        return Blame(None, (), [], GRADS_NOT_CUT)
    # a value or input finding of a program with inputs requiring grad: the pipeline ran the
    # backward before its inputs were compared (passes/pipelines._call), and a compiled
    # backward may write them (campaign 25, 94644fc8c5: Inductor's backward overwrote the
    # leaf with its gradient; a forward-only cut agreed at every stage, "unblamed")
    grads = grads or (check in _AFTER_BACKWARD and pipeline in _GRADS_CUT
                      and has_grad_inputs(program))
    fn, names, make = _loaded(program, pipeline, device)
    eager = _eager(fn, names, make)
    shadow = _shadow(fn, names, make)
    opts = _options(options)
    stages = PIPELINE_STAGES.get(pipeline, ())
    signal = verdict == "crash" and (check or "").startswith("signal:")
    iso = _Isolation(program, pipeline, device, opts, signal, eager, names, shadow) if (
        isolate or signal) else None
    away = set(stages) if isolate else set(_COMPILED)  # the stages run in a child

    # a value finding's cut runs past a write-back into an overlapping input (stages.cut)
    sequential = verdict not in ("crash", "timeout")
    if iso is not None:
        iso.sequential, iso.grads = sequential, grads

    def here(only: Sequence[str] | None) -> list[Any]:
        return cut(pipeline, fn, make, names, options=opts, program=program, device=device,
                   only=only, sequential_copies=sequential, grads=grads)

    def cut_(only: Sequence[str] | None = None) -> list[Any]:
        if iso is None:
            return here(only)
        if pipeline in _WHOLE_CUT:  # their cuts run all stages at once
            return iso.stage(None) if isolate else here(None)
        return [r for s in (only or stages)
                for r in (iso.stage(s) if s in away else here([s]))]

    if signal and all(s in stages for s in _COMPILED):
        # the compiled stages kill a process as they killed the pipeline's: first see
        # whether the prefix already departs up to them (module docstring)
        runs = cut_([s for s in stages if s not in _COMPILED])
        died = StageRun(_COMPILED[-1], EagerResult(error=WorkerDied(error or check or "")))
        b = blame(pipeline, verdict, check, eager, [*runs, died], names, shadow=shadow,
                  error=error)
        if b.stage is not None and b.stage not in _COMPILED:
            b.trail.insert(len(b.trail) - 1, (_COMPILED[0], "not run (the pipeline's own "
                                              "compile, which kills the process)"))
            return b
        runs += cut_(_COMPILED)
    else:
        runs = cut_()
    b = blame(pipeline, verdict, check, eager, runs, names, shadow=shadow, error=error)

    def runner(o: Any) -> str:
        if iso is not None:
            return iso.control(o)
        return _control(pipeline, fn, make, names, o, device, eager, shadow)

    if iso is None:  # a signal death's controls run in children: this one is not built there
        from aliasfuzz.passes.stages import aten_trace

        b = aten_trace_control(b, pipeline, verdict, check, eager,
                               lambda: aten_trace(pipeline, fn, make, names, options=opts),
                               names, shadow=shadow, error=error)
    if iso is None and verdict not in ("crash", "timeout"):
        b = stacked_pass_off(b, pipeline, opts,
                             lambda o: _control_result(pipeline, fn, make, names, o, device), names)
    b = scalar_codegen(b, pipeline, opts, device, runner)
    if verdict == "timeout" or b.stage == CPP_VECTORIZED:
        return b  # a control of a timeout would hang as the pipeline did
    front = None if iso is not None else (  # children run one pipeline's controls
        lambda o: _control("aot_eager", fn, make, names, o, device, eager, shadow))
    b = static_shapes(b, pipeline, opts, runner, front)
    b = auto_functionalized_v1(b, pipeline, opts, runner, program)
    if grads:
        b = donated_buffer(b, pipeline, opts, runner)
    if any(op.op in DYNAMO_REWRITES for op in program.body):
        b = dynamo_rewrite(b, pipeline, opts, runner)
    return order_exposed(pass_off(b, pipeline, opts, runner), pipeline, opts, runner)


def _loaded(program: Any, pipeline: str, device: str) -> tuple[Callable, list[str], Callable]:
    """``(fn, input names, make)`` of an IR program: the function the pipeline judged
    (launches spelled for ``make_fx`` where the pipeline does not trace with Dynamo) and a
    maker of fresh inputs on ``device``."""
    from aliasfuzz.fuzz.eager import make_inputs
    from aliasfuzz.fuzz.render import load_function
    from aliasfuzz.passes.pipelines import NON_DYNAMO_TRACING

    fn, _ = load_function(program, capture_triton=pipeline in NON_DYNAMO_TRACING)

    def make() -> tuple:
        return make_inputs(program, device)

    return fn, [t.name for t in program.inputs], make


def _eager(fn: Callable, names: Sequence[str], make: Callable[[], tuple]) -> EagerResult:
    from aliasfuzz.oracle.confirm import run_callable_named

    return run_callable_named(fn, names, make())


def aten_trace_control(
    b: Blame, pipeline: str, verdict: str, check: str | None, eager: EagerResult,
    run: Callable[[], Any], names: Sequence[str],
    shadow: Callable[[], EagerResult | None] | None = None, error: str | None = None,
) -> Blame:
    """The cut's blame ``b`` on ``decomposition`` checked with nothing decomposed: ``run()``
    gives the :func:`aliasfuzz.passes.stages.aten_trace` run (``make_fx`` with no
    decomposition table and the Python dispatcher off). When that run departs by the same
    check (a value finding) or raises the finding's error (a crash), no decomposition is
    needed for the departure: tracing to ATen is blamed, as :data:`ATEN_TRACE` (thirtieth
    audit cda8407184: a view taken before ``requires_grad_()`` is ``requires_grad=True`` in
    eager and ``False`` compiled; ``make_fx`` records no ``requires_grad_``, with or
    without Inductor's table). Otherwise ``b`` stands, its trail noting the control.
    Only single-stage blames on ``decomposition`` of a Dynamo pipeline are checked
    (``fx-reinplace``'s ``decomposition`` already traces with no table)."""
    if b.stage != "decomposition" or len(b.stages) != 1 or pipeline in _WHOLE_CUT:
        return b
    said = dict(b.trail).get("decomposition", "")
    got = blame(pipeline, verdict, check, eager, [run()], names, shadow=shadow, error=error)
    how = dict(got.trail).get(ATEN_TRACE, "")
    same = got.stage == ATEN_TRACE and _departed_by(how) == _departed_by(said)
    what = "no decomposition table, Python dispatcher off"
    if same:
        return Blame(ATEN_TRACE, (ATEN_TRACE,), [*b.trail, (ATEN_TRACE, f"{what}: {how}")])
    b.trail.append((ATEN_TRACE, f"{what}: {how or 'not run'}; blame stands"))
    return b


def _departed_by(said: str) -> str:
    """The check (or ``raises``) a trail entry ``departs (<check>: ...)`` names."""
    m = re.match(r"departs \((\w[\w-]*)", said)
    return m.group(1) if m else ""


#: The stage of Inductor's vectorized C++ codegen (``torch/_inductor/codegen/cpp.py``,
#: ``CppVecKernel``): blamed when a finding blamed on ``lowering`` or ``scheduler`` goes away
#: with scalar C++ code (``cpp.simdlen=1``), see :func:`scalar_codegen`.
CPP_VECTORIZED = "codegen:cpp-vectorized"


def _control_result(
    pipeline: str, fn: Callable, make: Callable[[], tuple], names: Sequence[str], opts: Any,
    device: str,
) -> EagerResult:
    """The pipeline's result with a control's options ``opts``, on fresh inputs (its error,
    if it raised, in ``error``); a view past its storage that Inductor's wrapper makes
    raises (:func:`aliasfuzz.oracle.wrapper_bounds.checked_views`)."""
    from aliasfuzz.oracle.judge import _as_result

    return _as_result(_run_control(pipeline, fn, make, names, opts, device))


def _run_control(pipeline: str, fn: Callable, make: Callable[[], tuple], names: Sequence[str],
                 opts: Any, device: str) -> Any:
    """The pipeline's :class:`~aliasfuzz.passes.execution.Execution` with options ``opts``
    on fresh inputs, stopping at a view past its storage that Inductor's wrapper makes."""
    from aliasfuzz.oracle.wrapper_bounds import checked_views
    from aliasfuzz.passes.pipelines import run_function

    with checked_views(stop=True):
        return run_function(pipeline, fn, make(), input_names=names, device=device, options=opts)


def _control(
    pipeline: str, fn: Callable, make: Callable[[], tuple], names: Sequence[str], opts: Any,
    device: str, eager: EagerResult, shadow: Callable[[], EagerResult | None],
) -> str:
    """``agrees`` / ``departs`` / ``raises`` / ``unsupported:<rule>``: the pipeline run with
    ``opts`` (a control's options) on fresh inputs, against eager under the finding's own
    checks; ``unsupported:<rule>`` when it raised a documented refusal
    (:data:`aliasfuzz.oracle.refusals.REFUSALS`, e.g. ``inductor-cpu-user-triton``: a user
    Triton kernel's codegen on CPU), which tells the control's answer cannot be seen here.
    A view past its storage that Inductor's wrapper makes raises there
    (:func:`aliasfuzz.oracle.wrapper_bounds.checked_views`), before a kernel writes through it."""
    from aliasfuzz.oracle.judge import _as_result
    from aliasfuzz.oracle.refusals import classify

    ex = _run_control(pipeline, fn, make, names, opts, device)
    res = _as_result(ex)
    if res.error is not None:
        refusal = classify(pipeline, ex.failure, make())
        return f"{UNSUPPORTED}{refusal.rule}" if refusal is not None else "raises"
    return "agrees" if departure(pipeline, eager, res, names, shadow) is None else "departs"


#: Pipelines whose cut runs all its stages at once (``only`` does not apply to them).
_WHOLE_CUT = ("torchscript", "fx-reinplace")
#: Runs of one step in child interpreters at most (:class:`_Isolation`).
_TRIES = 3


class KilledFromOutside(RuntimeError):
    """Every child interpreter of one step of a cut was killed by a signal it did not
    bring on itself (:attr:`aliasfuzz.fuzz.isolated.Died.fault`): a user's ``kill``, the
    OOM killer. No stage may depart on that (the fresh user of the tenth session filed a
    crash as a Dynamo crash by killing the children of its cut), so the blame stops: the
    campaign files the finding unblamed with an internal error that says why."""


class ChildDied(RuntimeError):
    """A stage run in a child interpreter whose child died (a signal, an exit without an
    answer, a timeout) while the finding is not a signal death: another error than the
    finding's (:func:`_same_error` does not match it)."""


def _isolated_stage(program: dict, pipeline: str, device: str, options: Any,
                    only: list[str] | None, sequential: bool = False,
                    grads: bool = False) -> list[Any]:
    """A child interpreter's step (:func:`aliasfuzz.fuzz.isolated.run_isolated`): the
    stages ``only`` of ``pipeline``'s cut of ``program`` (its JSON), with ``sequential``
    and ``grads`` as :func:`~aliasfuzz.passes.stages.cut`'s ``sequential_copies`` and
    ``grads``."""
    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.passes.stages import cut

    p = Program.from_json(program)
    fn, names, make = _loaded(p, pipeline, device)
    return cut(pipeline, fn, make, names, options=options, program=p, device=device,
               only=only, sequential_copies=sequential, grads=grads)


def _isolated_control(program: dict, pipeline: str, device: str, options: Any) -> str:
    """A child interpreter's step: :func:`_control` of ``program`` (its JSON) with the
    control's ``options``, against eager run in that child."""
    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.oracle.judge import _shadow

    fn, names, make = _loaded(Program.from_json(program), pipeline, device)
    return _control(pipeline, fn, make, names, options, device, _eager(fn, names, make),
                    _shadow(fn, names, make))


class _Isolation:
    """Stages and controls of one finding's cut, each run in a child interpreter
    (:func:`aliasfuzz.fuzz.isolated.run_isolated`), so that heap corruption by the compiled
    code kills a child, not the process cutting it (twelfth audit 487f0339f2: an
    out-of-bounds write of ``unfold_backward``'s vectorized C++ kernel; 0374cd4bda: a
    custom op writing through a stale storage offset, which glibc aborts at a later
    ``free``). Corruption does not kill every run, so one step runs up to :data:`_TRIES`
    times:

    * a **signal death** finding: each child checks the heap before it answers
      (:func:`aliasfuzz.fuzz.isolated.heap_check`: glibc otherwise notices corruption only
      at a later ``free``, which a child that answers and exits never reaches, and a cut
      with no departing stage is not written, ``driver.unconfirmed_death``); a child that
      dies by its own fault (:attr:`aliasfuzz.fuzz.isolated.Died.fault`: a fault signal,
      or an abort after glibc, ``std::terminate`` or an assertion said why; a signal sent
      from outside is run again) is that step's answer (the stage
      departs with the finding's own error, :class:`WorkerDied`; a control ``raises``); a
      step that survives and agrees with eager runs again, and only :data:`_TRIES`
      surviving, agreeing runs make it agree (a lucky run must not move the blame);
    * any other finding: a child that dies runs again; the first surviving run is the
      answer, and a stage whose every run died by its own fault is inconclusive for a
      value finding (:class:`ChildDied`, another error than a crash finding's).

    A step whose every child was killed from outside answers nothing: the blame stops
    (:class:`KilledFromOutside`). Inductor's FX-pass snapshots (``<inductor>``) whose
    every child died leave no run: those snapshots are our own construction."""

    def __init__(self, program: Any, pipeline: str, device: str, options: Any, signal: bool,
                 eager: EagerResult, names: Sequence[str],
                 shadow: Callable[[], EagerResult | None]):
        self.args = (program.to_json(), pipeline, device, options)
        self.signal, self.pipeline = signal, pipeline
        self.eager, self.names, self.shadow = eager, names, shadow
        self.sequential = self.grads = False  # cut's options (blame_program sets them)

    def _agrees(self, runs: list[Any]) -> bool:
        return all(departure(self.pipeline, self.eager, r.result, self.names, self.shadow)
                   is None for r in runs if "verdict" not in r.extra)

    def _answer(self, target: str, args: tuple, agrees: Callable[[Any], bool]) -> Any:
        """What step ``target(*args)`` answers in child interpreters by the rule of the
        class docstring: its value, or the :class:`~aliasfuzz.fuzz.isolated.Died` that
        decides (a signal death's first; a value finding's when every run died)."""
        from aliasfuzz.fuzz.isolated import Died, run_isolated

        got: Any = None
        outside: list[Died] = []
        faults: list[Died] = []
        for _ in range(_TRIES):
            got = run_isolated(f"{__name__}:{target}", args, check_heap=self.signal)
            if isinstance(got, Died):
                if not got.fault:  # a death from outside (no fault, no abort message)
                    outside.append(got)
                    continue
                if self.signal:
                    return got
                faults.append(got)
                continue
            if not (self.signal and agrees(got)):
                return got
        if faults and isinstance(got, Died):
            # no run survived: a death by the step's own fault answers, whichever came
            # last (CI 55: an unexplained abort, then two faults, stopped the blame)
            return faults[-1]
        if outside and (isinstance(got, Died) or self.signal):
            # no answer, or an agreement short of _TRIES clean runs (a signal death's)
            raise KilledFromOutside(
                f"{target}{[args[4]] if len(args) > 4 else ''}: {len(outside)} of "
                f"{_TRIES} child processes were killed by a signal nobody explained "
                f"({outside[-1].how}) and the others did not settle the answer: no blame "
                "(the finding is filed unblamed)")
        return got

    def stage(self, name: str | None) -> list[Any]:
        """The :class:`~aliasfuzz.passes.stages.StageRun` list of cut stage ``name`` (None:
        the whole cut of a pipeline in :data:`_WHOLE_CUT`)."""
        from aliasfuzz.fuzz.isolated import Died

        got = self._answer("_isolated_stage", (*self.args, None if name is None else [name],
                                                self.sequential, self.grads), self._agrees)
        return self._dead(name, got) if isinstance(got, Died) else got

    def _dead(self, name: str | None, died: Any) -> list[Any]:
        from aliasfuzz.passes.stages import StageRun

        if name is None or name.startswith("<"):
            return []
        what = f"{name} killed its child process ({died.how})"
        error = WorkerDied(what) if self.signal and died.fault else ChildDied(what)
        return [StageRun(name, EagerResult(error=error))]

    def control(self, options: Any) -> str:
        """``agrees`` / ``departs`` / ``raises`` of the control with ``options``
        (:func:`_control`) run in child interpreters by the rule of the class docstring (a
        death ``raises``)."""
        from aliasfuzz.fuzz.isolated import Died

        got = self._answer("_isolated_control", (*self.args[:3], options),
                           lambda answer: answer == "agrees")
        return "raises" if isinstance(got, Died) else got


def _on_full_inductor(b: Blame, pipeline: str) -> bool:
    """Whether ``b`` blames one stage of full Inductor (``lowering`` / ``scheduler``) of an
    Inductor pipeline: the blames the compile controls (:func:`scalar_codegen`,
    :func:`donated_buffer`, :func:`dynamo_rewrite`) check."""
    return pipeline in _PASS_OFF and b.stage in _COMPILED and len(b.stages) == 1


def scalar_codegen(
    b: Blame, pipeline: str, opts: Any, device: str, runner: Callable[[Any], str],
) -> Blame:
    """The cut's blame ``b`` on ``lowering`` / ``scheduler`` of a CPU program checked with
    scalar C++ code: the pipeline is compiled again with ``cpp.simdlen=1`` (no
    ``CppVecKernel``). When that control agrees with eager (no crash, same values), the
    defect is in the vectorized C++ codegen, not in lowering or fusion: the blame becomes
    :data:`CPP_VECTORIZED` (seventh audit 64c59fd440, b1a1abd13a: ``CppVecKernel.store``
    asserts on an atomic-add store whose index is not vectorized; ``cpp.simdlen=1`` fixes
    it). Otherwise ``b`` stands, its trail noting the control. Crash and value findings
    alike; other devices and blames are returned unchanged. ``runner(options)`` runs the
    program's pipeline with a control's options and says ``agrees`` / ``departs`` /
    ``raises`` (:func:`_control`, or :meth:`_Isolation.control` in a child)."""
    from aliasfuzz.passes.pipelines import PipelineOptions

    if device != "cpu" or not _on_full_inductor(b, pipeline):
        return b
    got = runner((opts or PipelineOptions()).with_inductor_config(**{"cpp.simdlen": 1}))
    if got == "agrees":
        return Blame(CPP_VECTORIZED, (CPP_VECTORIZED,),
                     [*b.trail, ("scalar-codegen", "cpp.simdlen=1: agrees")],
                     component=b.component)
    b.trail.append(("scalar-codegen", f"cpp.simdlen=1: {got}; blame stands"))
    return b


#: The stage of the compiled backward's reuse of donated buffers: blamed when a finding
#: blamed on ``lowering`` or ``scheduler`` after the backward ran goes away with
#: ``torch._functorch.config.donated_buffer = False``, see :func:`donated_buffer`.
DONATED_BUFFER = "backward:donated-buffer"
#: The trail entry of :func:`donated_buffer`.
_DONATED = "donated-buffer"


def donated_buffer(b: Blame, pipeline: str, opts: Any, runner: Callable[[Any], str]) -> Blame:
    """The cut's blame ``b`` on ``lowering`` / ``scheduler`` of a finding whose pipeline ran
    the backward (inputs requiring grad) checked with AOTAutograd's donated buffers off
    (``torch._functorch.config.donated_buffer = False``, torch 2.11 and 2.13). A saved
    tensor that ``collect_bw_donated_buffer_idxs`` finds aliasing no forward input or output
    *in the functional graph* is handed to Inductor's backward as a ``DonatedBuffer``, whose
    storage the backward may reuse; when the compiled forward makes that tensor share an
    input's storage anyway (the reinplace pass writes an input's update in place and saves
    the input), the backward overwrites the input (audit 48, 56183486c8: ``x[1] = 3`` under
    ``no_grad`` then ``sin(x)``; after backward ``x`` holds ``cos(x)``). When the control
    agrees with eager the blame becomes :data:`DONATED_BUFFER`; the reinplace-off check
    (:func:`enabled_by_reinplace`) still says whether the forward's reinplacing is needed.
    Otherwise ``b`` stands, its trail noting the control. Only Inductor's pipelines
    (``aot_eager``'s backward reuses no buffer) and single-stage blames; ``runner`` as in
    :func:`scalar_codegen`."""
    from aliasfuzz.passes.pipelines import PipelineOptions

    if not _on_full_inductor(b, pipeline):
        return b
    opts = opts or PipelineOptions()
    got = runner(replace(opts, functorch_config={**opts.functorch_config,
                                                 "donated_buffer": False}))
    if got != "agrees":
        b.trail.append((_DONATED, f"donated_buffer=False: {got}; blame stands"))
        return b
    moved = Blame(DONATED_BUFFER, (DONATED_BUFFER,),
                  [*b.trail, (_DONATED, "donated_buffer=False: agrees")], component=b.component)
    return enabled_by_reinplace(moved, pipeline, opts, runner)


#: Tensor methods whose call Dynamo rewrites into other ops when
#: ``torch._dynamo.config.enable_dynamo_decompositions`` is on
#: (``torch/_dynamo/variables/tensor.py``: ``method_addcmul_`` / ``method_addcdiv_`` with
#: ``value=``, into ``inductor_prims.fma``; torch 2.11 and 2.13), as the IR names them.
DYNAMO_REWRITES = ("addcmul_", "addcdiv_")
#: The trail entry of :func:`dynamo_rewrite`.
ENABLED_BY_DYNAMO = "enabled-by-dynamo"


def dynamo_rewrite(b: Blame, pipeline: str, opts: Any, runner: Callable[[Any], str]) -> Blame:
    """The cut's blame ``b`` on ``lowering`` / ``scheduler`` checked with Dynamo's own
    decompositions off (``torch._dynamo.config.enable_dynamo_decompositions = False``). When
    the pipeline then agrees with eager, the trail says so (:data:`ENABLED_BY_DYNAMO`):
    Inductor mishandles ops that Dynamo wrote in place of the program's call (the cut's
    ``dynamo`` stage runs that graph eagerly and agrees), which the reader of a repro whose
    program has no ``fma`` needs to know; the blame stands (audit 48, baa68a8925). Otherwise
    ``b`` is returned unchanged. Inductor pipelines and single-stage blames only; ``runner`` as
    in :func:`scalar_codegen`."""
    from aliasfuzz.passes.pipelines import PipelineOptions

    if not _on_full_inductor(b, pipeline):
        return b
    opts = opts or PipelineOptions()
    got = runner(replace(opts, dynamo_config={**opts.dynamo_config,
                                              "enable_dynamo_decompositions": False}))
    b.trail.append((ENABLED_BY_DYNAMO, f"enable_dynamo_decompositions=False: {got}"
                    + ("; the blame stands (Dynamo's graph runs right eagerly)" if got == "agrees"
                       else "")))
    return b


#: The trail entry of :func:`enabled_by_reinplace`.
ENABLED_BY = "enabled-by"
#: A control's answer when its run raised a documented refusal (``unsupported:<rule>``).
UNSUPPORTED = "unsupported:"
#: How :func:`enabled_by_reinplace`'s trail row begins when the crash went away with the
#: pass off but a documented refusal stopped the compile later.
ERROR_GONE = "reinplace disabled: the error is gone"
#: Inductor components (:attr:`Blame.component`) that run before codegen, where a
#: documented refusal of user Triton kernels on CPU is raised: a control that reaches that
#: refusal got past a crash raised in one of them.
_BEFORE_CODEGEN = ("lowering", "scheduler")
#: Documented refusals (:data:`aliasfuzz.oracle.refusals.REFUSALS` rules) raised in
#: Inductor's codegen, after lowering and scheduling: a control stopped by one got past them.
_CODEGEN_REFUSALS = ("inductor-cpu-user-triton",)


def enabled_by_reinplace(b: Blame, pipeline: str, opts: Any, runner: Callable[[Any], str]) -> Blame:
    """The cut's blame ``b`` on ``lowering`` / ``scheduler`` (full Inductor) checked with
    Inductor's reinplace pass disabled (``REINPLACE_INPLACEABLE_OPS``), when the pass ran
    and its graph, run eagerly, agreed. If the pipeline then agrees with eager, the trail
    says so (:data:`ENABLED_BY`): lowering fails on a graph only the reinplace pass makes,
    which is what a reader of the repro needs to know, while the blame stands, the pass's
    graph being right (audit 38, 0a4e0624e7: ``make_reindexer NYI on DtypeView`` for a
    custom op reinplaced onto a dtype view of a computed buffer; with the pass off it
    compiles and agrees). A crash raised before codegen (:data:`_BEFORE_CODEGEN`) whose
    control stops at a documented refusal after it (a user Triton kernel's codegen on CPU) is
    said to be gone without agreement being shown (audit 51, ecaa4998b9); any other answer
    is written to the trail with the blame standing. One compile per finding; Inductor
    pipelines with the pass on only."""
    ran = any(st == "reinplace" and what == "agrees" for st, what in b.trail)
    if pipeline not in _PASS_OFF or pipeline == "inductor-noreinplace" or len(b.stages) != 1 \
            or not ran:
        return b
    got = runner(opts.with_passes_off(pass_name("reinplace")))
    rule = got.removeprefix(UNSUPPORTED) if got.startswith(UNSUPPORTED) else None
    if got == "agrees":
        b.trail.append((ENABLED_BY, "reinplace disabled: agrees; the blame stands (the pass's "
                                    "own graph runs right eagerly)"))
    elif rule in _CODEGEN_REFUSALS and b.component in _BEFORE_CODEGEN:
        # audit 51, ecaa4998b9: a CPU program with a user Triton kernel crashed in the
        # scheduler; with the pass off the compile got past it to the kernel's codegen, which
        # needs a GPU. The crash (raised before codegen) is gone, agreement cannot be seen
        # here: said as such
        from aliasfuzz.oracle.refusals import REFUSALS

        why = next((r.why for r in REFUSALS if r.rule == rule), "")
        b.trail.append((ENABLED_BY, f"{ERROR_GONE}; the compile then stops at a documented "
                                    f"refusal ({rule}: {why}), so agreement with eager is not "
                                    "shown; the blame stands"))
    else:
        b.trail.append((ENABLED_BY, f"reinplace disabled: {got}; the blame stands"))
    return b


#: Pipelines whose Inductor passes can be disabled one by one (``disabled_passes``).
_PASS_OFF = ("inductor", "inductor-reinplace", "inductor-noreinplace")
#: At most this many pass-off compiles per finding (each is a full compile of the program).
_MAX_CONTROLS = 8
#: Passes that only reorder a graph's nodes within a mutation region
#: (``torch/_inductor/fx_passes/post_grad.py``: ``reorder_for_locality`` keeps
#: ``get_mutation_region_id``): they cannot change what the graph computes, so when
#: disabling one helps, a later pass mishandles the new order. Their controls are tried
#: after every other pass's (tenth audit a646b390df: with the order changed the reinplace
#: pass writes an input the epilogue then overwrites; both controls agree, the defect is
#: the reinplace pass's), and one that agrees never takes the blame: the cut's blame stands
#: (twelfth audit 8aba762808: the custom op's clone after the reinplace pass reads stale
#: ``eager_input_vals`` left by ``remove_noop_ops``; only the reorder control agreed on the
#: post-grad graph, and the finding was filed as reorder_for_locality's).
_REORDERS = ("REORDER_FOR_LOCALITY",)

#: What a pass-off trail entry says when only a reorder pass's control agreed (the blame
#: stood); :func:`aliasfuzz.campaign.driver.fast_path_only` reads it.
REORDER_ONLY = "a pass that only reorders nodes changes nothing a graph computes: blame stands"


#: Cost controls of a witness finding (:func:`cost_pass_off`): the stage a control blames,
#: the ``torch._inductor.config`` entries that turn its pass off, and why the pass is the
#: cause when it makes the code as lean as the witness. Audit 46 (2a25c0e3c1):
#: ``reorder_for_locality`` moved a read of ``x`` after ``halve_(x)``, so the reinplace pass
#: had to clone ``x`` (240 bytes against the witness's 120; 120 with the pass off); PyTorch
#: tracks reorders that defeat reinplacing (#132865, PR #133249).
COST_CONTROLS: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("post-grad:reorder_for_locality", {"reorder_for_locality": False},
     "the pass moves a read of a mutated tensor past the mutation, so the reinplace pass "
     "must keep a copy"),
)


def cost_pass_off(program: Any, pipeline: str, device: str, opts: Any, said: str) -> Blame:
    """The blame of a cost finding of check ``witness`` (an equivalent spelling whose code
    moves fewer bytes, :mod:`aliasfuzz.oracle.witness`). Cutting by values cannot place it
    (:data:`COST_NOT_CUT`); each control of :data:`COST_CONTROLS` compiles the program with
    one Inductor pass off: a control that keeps eager's values and whose code is as lean as
    the witness by the claim's figure, read from ``said`` (the finding's explanation): the
    temporaries its generated code allocates when the witness is leaner by them
    (:func:`aliasfuzz.oracle.witness.witness_temporaries`), Inductor's own count of bytes
    per call otherwise, names that pass's stage. The trail says what each control moved;
    with none as lean, no stage is named. ``pipeline`` other than ``inductor``, or an
    explanation without the witness's bytes: no control runs."""
    from aliasfuzz.oracle.judge import _as_result
    from aliasfuzz.oracle.witness import witness_bytes, witness_temporaries
    from aliasfuzz.passes.cost import total
    from aliasfuzz.passes.pipelines import PipelineOptions, run_function

    pair = witness_bytes(said)
    if pipeline != "inductor" or pair is None:
        return Blame(None, (), [], COST_NOT_CUT)
    # the claim's own figure: the temporaries when the witness is leaner by them (what its
    # repro compares), Inductor's count otherwise
    temps = witness_temporaries(said)
    moved, lean = temps or pair
    unit = "bytes of temporaries per call" if temps else "bytes per call"
    fn, names, make = _loaded(program, pipeline, device)
    eager = _eager(fn, names, make)
    trail: list[tuple[str, str]] = []
    for stage, entries, why in COST_CONTROLS:
        flags = ", ".join(f"{k} = {v!r}" for k, v in entries.items())
        ex = run_function(pipeline, fn, make(), input_names=names, device=device,
                          options=(opts or PipelineOptions()).with_inductor_config(**entries))
        res = _as_result(ex)
        counted = total(ex.cost) if ex.ok and ex.cost else None
        if res.error is not None or departure(pipeline, eager, res, names) is not None:
            trail.append(("pass-off", f"{flags}: no longer eager's values; not a control"))
        elif counted is None or counted["unmeasured"]:
            trail.append(("pass-off", f"{flags}: bytes not measured"))
        elif (got := _claimed(counted, temps is not None)) <= lean:
            verb = "allocates" if temps else "moves"
            trail.append(("pass-off", f"{flags}: Inductor's code {verb} {got} {unit}, the "
                          f"witness {lean} (as compiled {moved}): {why}"))
            return Blame(stage, (stage,), trail)
        else:
            trail.append(("pass-off", _cost_short(flags, got, moved, lean, unit)))
    return Blame(None, (), trail, COST_NOT_CUT)


def _claimed(counted: dict[str, int], temporaries: bool) -> int:
    """A control's figure for the claim: the temporaries its generated code allocates (the
    scheduler's reading where the code was not read), or Inductor's count of bytes moved."""
    if not temporaries:
        return counted["inductor_bytes"]
    code = counted.get("code_temporary_bytes", -1)
    return code if code >= 0 else counted["temporary_bytes"]


def _cost_short(flags: str, got: int, moved: int, lean: int, unit: str = "bytes per call") -> str:
    """The trail entry of a cost control whose code keeps eager's values but moves more than
    the witness: how much of the excess it removed. Audit 50 (eaede8e418) read "still 528
    bytes" as a control that failed, while it removed 97 % of the excess (2264 bytes as
    compiled, the witness 480; the rest another known bug's)."""
    said = f"{flags}: {got} {unit} (as compiled {moved}, the witness {lean})"
    if got >= moved or moved <= lean:
        return f"{said}: no leaner; no stage named"
    share = 100 * (moved - got) // (moved - lean)
    return (f"{said}: removes {share}% of the excess, not all of it; no stage named (a control "
            "names its pass only when the code is as lean as the witness)")


def pass_name(stage: str) -> str | None:
    """The ``torch._inductor.config.disabled_passes`` name of a stage of Inductor's FX
    passes (``reinplace`` -> ``REINPLACE_INPLACEABLE_OPS``, ``joint:remove_noop_ops`` ->
    ``REMOVE_NOOP_OPS``: ``GraphTransformObserver`` names, which
    ``torch/fx/passes/graph_transform_observer.py`` checks), None for other stages.
    ``REMOVE_NOOP_OPS`` disables the joint and the post-grad instance together."""
    if stage == "reinplace":
        return "REINPLACE_INPLACEABLE_OPS"
    if stage.startswith(("joint:", "post-grad:")):
        return stage.split(":", 1)[1].upper()
    return None


#: The trail entry of :func:`_also_fixed_by`.
ALSO_FIXED_BY = "also-fixed-by"
#: Earlier passes whose own control is also run when the blamed pass's control agrees:
#: ``remove_noop_ops`` leaves graphs the reinplace pass then mishandles (fifth audit
#: 2be6c01096: a dropped full-range ``slice_scatter``; twelfth audit 8aba762808: stale
#: ``eager_input_vals``), and audit 38 found that disabling it removed a reinplace finding too,
#: which the trail did not say (one compile each, so only these).
_ALSO_TRIED = ("REMOVE_NOOP_OPS",)


def _also_fixed_by(b: Blame, control: Callable[[str], str]) -> None:
    """When disabling the blamed pass removed the departure, each pass of
    :data:`_ALSO_TRIED` that changed the graph before it (it is in ``b.trail``) is disabled
    too; one whose control agrees is noted (:data:`ALSO_FIXED_BY`): both passes take part,
    the blame stays on the pass the cut named (its graph is the first that departs)."""
    seen = [s for s, _ in b.trail]
    before = seen[:seen.index(b.stage)] if b.stage in seen else []
    tried = {pass_name(b.stage)}
    for stage in before:
        name = pass_name(stage)
        if name in _ALSO_TRIED and name not in tried:  # joint and post-grad share a name
            tried.add(name)
            got = control(name)
            b.trail.append((ALSO_FIXED_BY, f"{stage} disabled: {got}"
                            + ("; both passes take part, the blame stays on "
                               f"{b.stage} (its graph is the first that departs)"
                               if got == "agrees" else "")))


#: What a stacked stage's pass-off entry says when disabling its pass leaves the pipeline's
#: result as it was (:func:`stacked_pass_off`).
NOT_ITS_OWN = "the same result: the departure it adds is not its own, not blamed apart"


def stacked_pass_off(
    b: Blame, pipeline: str, opts: Any, result_of: Callable[[Any], EagerResult],
    names: Sequence[str],
) -> Blame:
    """A blame of several stages (a later one adds a departure of its own in the cut) whose
    later stages are Inductor passes, checked by disabling each of those passes in the
    pipeline itself: when the pipeline's result with the pass off is the one it gives with
    the pass on (``result_of(options)``, :func:`_control_result`, compared by the finding's
    checks), that pass adds nothing to what the program computes, and its departure in the
    cut is not a root cause of its own: it is dropped from ``stages`` (the trail says
    :data:`NOT_ITS_OWN`). Otherwise it stays, the trail saying the result changes. The first
    stage is never dropped; a pipeline that raises under a control keeps every stage.
    Audit 55 (2be6c01096): ``v0 = slice_scatter(x1, x1)`` then a custom op on ``v0[0]`` was
    filed as two root causes, functionalization's and "the reinplace pass, blamed apart",
    while disabling the reinplace pass left the wrong result unchanged (``remove_noop_ops``'s
    swap of the fresh scatter for the offset input did it). Returns a new :class:`Blame`."""
    from aliasfuzz.passes.pipelines import PipelineOptions

    later = [s for s in b.stages[1:] if pass_name(s) is not None]
    if pipeline not in _PASS_OFF or not later:
        return b
    opts = opts or PipelineOptions()
    base = result_of(opts)
    if base.error is not None:
        return b
    keep = list(b.stages)
    for stage in later:
        off = result_of(opts.with_passes_off(str(pass_name(stage))))
        same = off.error is None and departure(pipeline, base, off, names) is None
        b.trail.append(("pass-off", f"{stage} disabled: "
                        + (NOT_ITS_OWN if same else "the result changes: blamed apart")))
        if same:
            keep.remove(stage)
    return Blame(b.stage, tuple(keep), b.trail, b.reason, b.component, b.moved_from, b.own_off)


#: The trail entry of :func:`static_shapes`.
STATIC_SHAPES = "static-shapes"
#: Pipelines that compile through Dynamo, where ``dynamic`` means symbolic sizes.
_DYNAMIC = ("aot_eager", "inductor", "inductor-reinplace", "inductor-noreinplace")


#: The trail entry of :func:`auto_functionalized_v1`.
AUTO_FUNCTIONALIZED_V2 = "auto-functionalized-v2"
#: Stages whose handling of a mutating custom op depends on its auto_functionalized form.
_AUTO_FUNCTIONALIZED_STAGES = ("functionalization", "aot", "aot-runtime", "reinplace")


def auto_functionalized_v1(b: Blame, pipeline: str, opts: Any, runner: Callable[[Any], str],
                           program: Any) -> Blame:
    """A blamed finding of a program with a custom op (IR ops ``fz.*``, which mutate through
    ``mutates_args``), run again with ``torch._inductor.config.
    enable_auto_functionalized_v2 = False`` (AOTAutograd wraps the op in the v1
    ``auto_functionalized``, which copies the mutated arguments instead of regenerating them
    from their bases): the trail's :data:`AUTO_FUNCTIONALIZED_V2` entry says what that
    control gave. The blame stays. Audit 57 (502df9d4e6): a custom op's write into a view of
    an input at a nonzero storage offset was lost under v2 only, which the repro did not
    say. Only where the blamed stage is one of :data:`_AUTO_FUNCTIONALIZED_STAGES`, on the
    pipelines that trace with Dynamo, and the finding ran v2. Returns ``b``."""
    from dataclasses import replace

    from aliasfuzz.passes.pipelines import PipelineOptions

    opts = opts or PipelineOptions()
    if (b.stage not in _AUTO_FUNCTIONALIZED_STAGES or pipeline not in _DYNAMIC
            or not getattr(opts, "auto_functionalized_v2", True)
            or not any(str(op.op).startswith("fz.") for op in getattr(program, "body", ()))):
        return b
    got = runner(replace(opts, auto_functionalized_v2=False))
    b.trail.append((AUTO_FUNCTIONALIZED_V2, f"enable_auto_functionalized_v2=False: {got}"))
    return b


#: Stages ``aot_eager`` runs as Inductor's pipelines do (the same Dynamo capture and
#: AOTAutograd): a control of :func:`static_shapes` that Inductor cannot run here is run there.
_FRONT_END = ("dynamo", "functionalization", "aot")


def static_shapes(b: Blame, pipeline: str, opts: Any, runner: Callable[[Any], str],
                  front: Callable[[Any], str] | None = None) -> Blame:
    """A blamed finding of a program compiled with dynamic shapes (``opts.dynamic``), run
    again with ``dynamic=False`` (``runner(options)``, as :func:`pass_off`): the trail's
    :data:`STATIC_SHAPES` entry says ``dynamic=False: agrees`` when the finding needs
    symbolic sizes, else what the control gave. The blame stays. Audit 53 (0fe554f63b):
    a slice of size ``(s0+1)//3``, 1 at run time, read past its buffer under
    ``dynamic=True`` only (``ExpandView.make_reindexer`` broadcasts a literal 1), and the
    repro did not say dynamic shapes were needed. When the control is ``unsupported`` here
    (a user Triton kernel in Inductor's CPU codegen) and the blamed stage is one of
    :data:`_FRONT_END`, ``front(options)`` runs it on ``aot_eager`` and the entry ends with
    what that gave (audit 56, 262548339d: Dynamo's crash on a SymInt stride was gone with
    ``dynamic=False``, and the trail said only "unsupported"). Returns ``b``."""
    from dataclasses import replace

    if b.stage is None or pipeline not in _DYNAMIC or not getattr(opts, "dynamic", False):
        return b
    static = replace(opts, dynamic=False)
    got = runner(static)
    if got.startswith(UNSUPPORTED) and front is not None and pipeline != "aot_eager" \
            and b.stage in _FRONT_END:
        got = f"{got}; on aot_eager (the same {_front_words(b.stage)}): {front(static)}"
    b.trail.append((STATIC_SHAPES, f"dynamic=False: {got}"))
    return b


def _front_words(stage: str) -> str:
    """The front-end stage ``aot_eager`` shares with Inductor, in words."""
    return {"dynamo": "Dynamo capture", "functionalization": "functionalization",
            "aot": "AOTAutograd"}.get(stage, stage)


#: The trail entry of :func:`order_exposed`.
EXPOSED_BY = "exposed-by"
#: At most this many controls of :func:`order_exposed` per finding (a full compile each).
_MAX_EXPOSING = 4
#: A blamed stage's own trail row when its graph departs by an order-dependent write alone
#: (:func:`blame`): run eagerly its values are eager's.
_ORDER_ONLY = "departs (order-dependent write"


def order_exposed(b: Blame, pipeline: str, opts: Any, runner: Callable[[Any], str]) -> Blame:
    """The passes that expose a blamed stage's order-dependent write, on Inductor's pipelines.

    When the stage ``b`` blames is not an Inductor pass (``functionalization``: its
    write-back of a self-overlapping input is one ``copy_`` whose result depends on the
    write order) and its own trail row departs by that alone (its graph, run eagerly, gives
    eager's values), the cut names where the graph lost its single meaning but not what made
    Inductor's order differ from eager's. Each Inductor pass after it that changed the graph
    (reorder passes first, :data:`_REORDERS`; at most :data:`_MAX_EXPOSING`) is disabled in
    turn (``runner(options)``, as :func:`pass_off`); the first whose control agrees is noted
    (:data:`EXPOSED_BY`), else that none did. The blame stays: the pass does not make the
    write order-dependent, it only changes which order Inductor's code writes in (audit 53,
    f132a3c672: ``reorder_for_locality`` moved a reader of the input after the scatter, so the
    reinplace pass kept the whole-input ``copy_``; with the pass off Inductor agreed, and the
    audit found the trail's "departs" rows a prediction that named no pass). Returns ``b``."""
    from aliasfuzz.passes.pipelines import PipelineOptions

    if (pipeline not in _PASS_OFF or b.stage is None or pass_name(b.stage) is not None
            or b.stage == "aot"):
        return b
    own = [w for s, w in b.trail if s == b.stage]
    if not own or not own[0].startswith(_ORDER_ONLY):
        return b
    opts = opts or PipelineOptions()
    seen = [s for s, _ in b.trail]
    later = [s for s in seen[seen.index(b.stage) + 1:] if pass_name(s) is not None]
    order = [s for s in later if pass_name(s) in _REORDERS] + \
        [s for s in later if pass_name(s) not in _REORDERS]
    tried: list[str] = []
    for stage in order:
        name = pass_name(stage)
        if name in tried or len(tried) >= _MAX_EXPOSING:
            continue
        tried.append(str(name))
        got = runner(opts.with_passes_off(name))
        if got == "agrees":
            b.trail.append((EXPOSED_BY, f"{stage} disabled: agrees; it changes the order "
                                        f"Inductor's code writes in, the blame stays on {b.stage}"))
            return b
    b.trail.append((EXPOSED_BY, f"no pass's control agrees ({', '.join(tried) or 'none tried'}): "
                                "Inductor's own code writes in another order than eager"))
    return b


def pass_off(b: Blame, pipeline: str, opts: Any, runner: Callable[[Any], str]) -> Blame:
    """The cut's blame ``b`` checked by disabling the blamed pass (module docstring).

    ``opts``: the :class:`~aliasfuzz.passes.pipelines.PipelineOptions` of the finding;
    ``runner(options)`` runs a control (see :func:`scalar_codegen`). Returns ``b`` (its
    trail noting the control) or a new :class:`Blame` naming the earlier pass whose control
    agrees. Only single-stage blames on an Inductor FX pass of :data:`_PASS_OFF` are checked."""
    from aliasfuzz.passes.pipelines import PipelineOptions

    opts = opts or PipelineOptions()
    own = pass_name(b.stage) if b.stage else None
    if b.stage in _COMPILED:
        return enabled_by_reinplace(b, pipeline, opts, runner)
    if pipeline not in _PASS_OFF or len(b.stages) != 1 or (own is None and b.stage != "aot"):
        return b

    def control(name: str) -> str:
        return runner(opts.with_passes_off(name))

    if own is not None:
        got = control(own)
        if got != "departs":
            b.trail.append(("pass-off", f"{b.stage} disabled: {got}; blame stands"))
            if got == "agrees":
                _also_fixed_by(b, control)
            return b
    tried: set[str] = {own} if own else set()
    order = [s for s, _ in b.trail if pass_name(s) not in _REORDERS]
    order += [s for s, _ in b.trail if pass_name(s) in _REORDERS]
    for stage in order:
        other = pass_name(stage)
        if other is None or other in tried or len(tried) >= _MAX_CONTROLS:
            continue
        tried.add(other)
        if control(other) == "agrees":
            said = f"{b.stage} {'disabled: departs' if own else 'departs'}; {stage} disabled: agrees"
            if other in _REORDERS:  # it only exposes a defect of the stage the cut blamed
                b.trail.append(("pass-off", f"{said} ({REORDER_ONLY})"))
                return b
            return Blame(stage, (stage,), [*b.trail, ("pass-off", said)],
                         moved_from=b.stage, own_off=own is not None)
    b.trail.append(("pass-off", f"no pass's control agrees ({', '.join(sorted(tried))}); "
                                "blame stands"))
    return b
