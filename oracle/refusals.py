"""Documented refusals: which pipeline failures are ``unsupported`` rather than ``crash``.

A pipeline that raises where eager does not is a ``crash`` (a finding) unless the failure is
a clean, documented refusal of a program the pipeline does not take: then the run is
``unsupported`` (counted per rule, never a finding). :data:`REFUSALS` is the rule table;
each row names the exception types and/or message pattern it matches, the pipelines and
stages it applies to, and the PyTorch source that documents the refusal. Anything else
(internal asserts, ``AssertionError``, a wrong exception type such as a ``TypeError`` out
of a lowering, signals, CUDA errors) stays a ``crash``.

Matching (:func:`classify`): a row matches a :class:`~aliasfuzz.passes.execution.Failure`
when the pipeline and stage fit, one of ``types`` is among ``failure.kinds`` (qualified
class names along the exception's MRO and ``__cause__`` chain: subclasses match), or the row
has no types, and ``pattern`` (when set) is found in ``"<error_type>: <message>"``. The
first matching row wins. The table is documented in oracle/README.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["REFUSALS", "Refusal", "classify"]


@dataclass(frozen=True)
class Refusal:
    """One row: a documented refusal ``rule`` (the reason the report counts)."""

    rule: str
    types: tuple[str, ...]  # qualified class names; empty: any type
    pattern: str | None  # regex searched in "<error_type>: <message>"; None: any message
    pipelines: frozenset[str] | None  # None: every pipeline
    stages: frozenset[str] | None  # None: every stage
    why: str  # one line, shown in the explanation
    source: str  # where PyTorch documents the refusal
    # only when an input of the call maps two indices to one element (the refusal is about
    # such an input; without one, the compiler made the overlap: a crash)
    needs_overlapping_input: bool = False
    # only when an input of the call is a tensor requiring grad (the refusal is of the
    # backward the compiler traces for it; without one, no backward was traced: a crash)
    needs_grad_input: bool = False

    def matches(self, pipeline: str, failure: Any, inputs: Any = None) -> bool:
        if self.pipelines is not None and pipeline not in self.pipelines:
            return False
        if self.needs_overlapping_input and not _overlapping_input(inputs):
            return False
        if self.needs_grad_input and not _grad_input(inputs):
            return False
        if self.stages is not None and failure.stage not in self.stages:
            return False
        kinds = set(getattr(failure, "kinds", ()) or ())
        if self.types and not kinds & set(self.types):
            return False
        text = f"{failure.error_type}: {failure.message}"
        return self.pattern is None or re.search(self.pattern, text) is not None


def _overlapping_input(inputs: Any) -> bool:
    """Whether some tensor of ``inputs`` has internal overlap (ATen's own test)."""
    import torch

    return any(
        isinstance(t, torch.Tensor) and t.layout == torch.strided
        and torch._debug_has_internal_overlap(t) == 1
        for t in inputs or ()
    )


def _grad_input(inputs: Any) -> bool:
    """Whether some tensor of ``inputs`` requires grad."""
    import torch

    return any(isinstance(t, torch.Tensor) and t.requires_grad for t in inputs or ())


_TS = frozenset({"torchscript"})
_NOT_SUPPORTED = r"(?:not (?:yet )?supported|does not support|is unsupported)"

#: The rule table, first match wins (oracle/README.md "Crashes and documented refusals").
REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        "dynamo-unsupported",
        ("torch._dynamo.exc.Unsupported",),
        None,
        None,
        None,
        "Dynamo does not support a construct of the program",
        "torch/_dynamo/exc.py Unsupported (graph breaks: torch.compile programming model, "
        "'Working with Graph Breaks'); raised to the caller under fullgraph",
    ),
    Refusal(
        "make-fx-raw-triton-launch",
        ("aliasfuzz.fuzz.triton_compat.UncapturedTritonLaunch",),
        None,
        None,
        frozenset({"trace"}),
        "make_fx does not capture a raw @triton.jit launch of a hand-written function "
        "(capture needs torch.library.wrap_triton, which generated programs use on fx-reinplace)",
        "torch/_library/triton.py wrap_triton docstring: make_fx and non-strict export "
        "'perform Dispatcher-based tracing (via __torch_dispatch__) and cannot see calls to "
        "raw triton kernels'",
    ),
    Refusal(
        "not-implemented",
        (),
        r"(?:^|\n|: )NotImplementedError: [^\n]*" + _NOT_SUPPORTED,
        None,
        None,
        "a NotImplementedError saying the construct is not supported",
        "NotImplementedError is Python's documented 'not implemented here' signal; e.g. "
        "torch/_inductor/lowering.py assert_nyi ('inductor does not support ...')",
    ),
    Refusal(
        "functionalize-mutable-custom-op",
        (),
        r"custom \(non-ATen\) operator",
        frozenset({"fx-reinplace"}),
        frozenset({"trace"}),
        "functionalize does not support custom ops with mutable (aliasing) arguments",
        "torch/_subclasses/functional_tensor.py (FunctionalTensorMode: 'Found a custom "
        "(non-ATen) operator whose output has alias annotations'); pytorch-seams.md section 2",
    ),
    Refusal(
        "functionalize-as-strided-view-chain",
        (),
        r"mutation on a view chain of length \d+, where view \d+ was an as_strided\(\) call",
        None,
        None,
        "functionalization bans a mutation through a view chain holding as_strided "
        "(non-compositional); the error names the workaround",
        "aten/src/ATen/FunctionalStorageImpl.cpp / FunctionalTensorWrapper.cpp: 'as_strided() "
        "is non-compositional, and therefore is not possible to functionalize properly today, "
        "so this behavior is banned in compile' (pytorch/pytorch#104505)",
    ),
    Refusal(
        "aot-mixed-dtype-aliased-input-mutation",
        (),
        r"aot_autograd\(\) does not yet handle input mutations on views with different dtypes",
        None,
        None,
        "AOTAutograd does not yet take a mutation of inputs that share a storage as views of "
        "different dtypes (its synthetic base needs one dtype)",
        "torch/_functorch/_aot_autograd/runtime_wrappers.py merge_view_inputs ('Regenerating "
        "views when reinterpreting complex / real tensors seems non-trivial, not handling for "
        "now'); the open enhancement pytorch/pytorch#194747 (the ninth campaign's fourth "
        "auditor on 63f507a08e: a known limitation)",
    ),
    Refusal(
        "functionalize-set-frozen-storage",
        (),
        r"cannot mutate tensors with frozen storage",
        None,
        None,
        "functionalization bans a write into a storage that set_ replaced (set_ freezes the "
        "tensor's old storage), also when set_ gives a tensor its own storage back",
        "aten/src/ATen/FunctionalTensorWrapper.cpp set__impl ('FREEZE the old storage, "
        "preventing mutations to it ... we ban it'); FunctionalStorageImpl::add_update's "
        "TORCH_CHECK; test/functorch/test_aotdispatch.py test_set__not_allowed asserts the "
        "error (audit 43, 3a806c5433: y = x.add_(1); y.set_(x); y.add_(1))",
    ),
    Refusal(
        "aot-set-input-with-other-mutations",
        (),
        r"Encountered a (?:set_|resize_) on a graph input, but the input has other mutations "
        r"that we cannot\s+keep in the graph\. This is not supported today",
        None,
        None,
        "AOTAutograd does not take a set_ (or resize_) of a graph input that also has mutations "
        "it cannot keep in the graph",
        "torch/_functorch/_aot_autograd/functional_utils.py _check_if_mutation_can_be_in_graph "
        "('This is not supported today'; Note [set_() Input Mutations in AOTAutograd]): e.g. "
        "x.set_(y) of an input then a data write of x (issue 15's set_ row)",
    ),
    Refusal(
        "internal-overlap-input-write-back",
        (),
        r"more than one element of the written-to tensor refers to a single memory location",
        None,
        None,
        "the program mutates an input with internal overlap (an expanded or otherwise "
        "self-overlapping layout): the compiled input write-back is a whole-tensor copy_, "
        "which ATen refuses for such a tensor",
        "aten/src/ATen/MemoryOverlap.cpp assert_no_internal_overlap ('unsupported operation: "
        "more than one element of the written-to tensor refers to a single memory location. "
        "Please clone() the tensor before performing the operation.'), raised by the "
        "copy_ AOTAutograd emits for a mutated input",
        needs_overlapping_input=True,
    ),
    Refusal(
        "joint-graph-autograd",
        (),
        r"returned an invalid gradient|modified by an inplace operation|"
        r"Autograd not support dtype|does not require grad and does not have a grad_fn",
        frozenset({"aot_eager", "inductor", "inductor-noreinplace", "inductor-reinplace"}),
        frozenset({"trace", "compile"}),
        "AOTAutograd traces, when it compiles, the backward of every output and mutated "
        "input requiring grad (the joint graph), where eager runs only the backward a loss "
        "asks for; eager's own autograd formula refusing there is not the compiler's bug",
        "torch/_functorch/_aot_autograd/graph_capture_wrappers.py create_joint: "
        "torch.autograd.grad(needed_outs, grad_primals, ...) while tracing",
        needs_grad_input=True,
    ),
    Refusal(
        "inductor-cpu-user-triton",
        (),
        r"0 compatible backends for target \(cpu\)",
        frozenset({"inductor"}),
        frozenset({"compile"}),
        "Inductor's codegen of user Triton kernels needs a GPU",
        "triton.compiler: no backend for target cpu; pytorch-seams.md section 4",
    ),
    Refusal(
        "fx-reinplace-autograd",
        (),
        r"^UntraceableAutograd: statement \d+: .* \(autograd\) cannot be traced",
        frozenset({"fx-reinplace"}),
        frozenset({"trace"}),
        "make_fx traces a forward-only ATen graph: torch.autograd.grad has nothing to "
        "differentiate, and a no_grad block's grad mode is not recorded (run_pipeline "
        "refuses before tracing)",
        "torch/fx/experimental/proxy_tensor.py make_fx (grad mode recorded as "
        "_set_grad_enabled only with pre_dispatch=True); passes/pipelines.py "
        "untraceable_autograd",
    ),
    Refusal(
        "make-fx-data-dependent-branch",
        ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",),
        # raised from a Python-level call under make_fx's torch-function mode (the program's
        # own `if t[i] < c:`, Tensor.__bool__), not from a decomposition or C++: a
        # decomposition that guards on data would still be a crash
        r"Could not guard on data-dependent expression[\s\S]*Caused by: "
        r"\(fx/experimental/proxy_tensor\.py:\d+ in __torch_function__\)",
        frozenset({"fx-reinplace"}),
        frozenset({"trace"}),
        "make_fx's fake tracing cannot follow Python control flow on a tensor's value "
        "(the program branches on an element: if_lt_add_); torch.compile graph-breaks there",
        "torch/fx/experimental/symbolic_shapes.py GuardOnDataDependentSymNode ('Could not "
        "guard on data-dependent expression'); torch.cond is the documented way to trace such "
        "a branch (torch/_higher_order_ops/cond.py). Audit 26 labeled a crash of it false "
        "positive (crash-decomposition-a251a9759d, the b13 seed twin's mutant)",
    ),
    Refusal(
        "fx-untyped-storage-argument",
        ("builtins.NotImplementedError",),
        r"argument of type: <class 'torch\.storage\.UntypedStorage'>",
        frozenset({"fx-reinplace"}),
        frozenset({"trace"}),
        "make_fx cannot record an UntypedStorage argument in an FX graph (set_ with a "
        "storage, issue 15's set_.storage row); torch.compile's pipelines run the program",
        "torch/fx/proxy.py TracerBase.create_arg: raise NotImplementedError(f'argument of "
        "type: {type(a)}') for a type FX has no node argument for",
    ),
    Refusal(
        "functorch-requires-grad-inside-transform",
        (),
        r"You are attempting to call Tensor\.requires_grad_\(\).*inside of a function "
        r"being transformed by a functorch transform\. This is unsupported",
        frozenset({"fx-reinplace"}),
        frozenset({"trace"}),
        "torch.func.functionalize (the front end of fx-reinplace), like every functorch "
        "transform, refuses requires_grad_() inside the transformed function",
        "torch/_functorch/eager_transforms.py enable_inplace_requires_grad (the only place "
        "that allows it); the error's own text: 'This is unsupported'",
    ),
    Refusal(
        "torchscript-unscriptable-op",
        (),
        r"^Unscriptable: .*is not scriptable$",
        _TS,
        frozenset({"trace"}),
        "the program uses an op TorchScript does not support (registry row scriptable=False)",
        "torch/_tensor_docs.py Tensor.view(dtype): 'This overload is not supported by "
        "TorchScript, and using it in a Torchscript program will cause undefined behavior'; "
        "user Triton kernels: TorchScript compiles only TorchScript-typed functions "
        "(docs: TorchScript Language Reference)",
    ),
    Refusal(
        "torchscript-frontend",
        (),
        r"^Unscriptable: frontend: (?!.*INTERNAL ASSERT)",
        _TS,
        frozenset({"trace"}),
        "the TorchScript frontend rejects a construct outside its language subset",
        "torch/jit/frontend.py NotSupportedError / UnsupportedNodeError; TorchScript "
        "Language Reference (supported subset of Python)",
    ),
    Refusal(
        "torchscript-trace",
        (),
        r"^Unscriptable: trace(?: mode)?: (?!.*INTERNAL ASSERT)",
        _TS,
        frozenset({"trace"}),
        "torch.jit.trace cannot trace the program (None inputs, untraceable outputs)",
        "torch/jit/_trace.py trace docstring (inputs and outputs must be tensors or nested "
        "tuples of tensors)",
    ),
)


def classify(pipeline: str, failure: Any, inputs: Any = None) -> Refusal | None:
    """The first row of :data:`REFUSALS` matching ``failure`` under ``pipeline``, or None
    (``failure`` is a :class:`~aliasfuzz.passes.execution.Failure`; None gives None).
    ``inputs`` are the call's fresh inputs (rows with ``needs_overlapping_input`` need
    them; without them those rows never match)."""
    if failure is None:
        return None
    return next((r for r in REFUSALS if r.matches(pipeline, failure, inputs)), None)
