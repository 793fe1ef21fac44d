"""``crash`` vs ``unsupported``: the refusal table (oracle/refusals.py) and its verdict.

A documented refusal (Dynamo's ``Unsupported``, a "not supported" ``NotImplementedError``,
a TorchScript frontend rejection, an op TorchScript documents as unsupported, a by-design
limit of a pipeline) is ``unsupported``: counted per rule, never a finding. Internal
asserts and wrong exception types stay ``crash``. The two TorchScript ``view(dtype)``
corpus entries are refusals of rule ``torchscript-unscriptable-op``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.judge import judge
from aliasfuzz.oracle.refusals import REFUSALS, classify
from aliasfuzz.oracle.verdict import FINDINGS, Verdict
from aliasfuzz.passes.execution import Execution, Failure

NOT_FINDINGS = Path(__file__).resolve().parents[1] / "data" / "not_findings"
VIEW_DTYPE_ENTRIES = ["crash-torchscript-6d6a4a6b4c", "crash-torchscript-f6ca5ce610"]


def _failure_of(e: BaseException, stage: str = "compile") -> Failure:
    return Failure.of(stage, e)


def _rule(pipeline: str, failure: Failure) -> str | None:
    r = classify(pipeline, failure)
    return None if r is None else r.rule


def test_unsupported_is_one_more_member_of_the_one_ordered_enum():
    assert Verdict.parse("unsupported") is Verdict.UNSUPPORTED
    assert Verdict.UNSUPPORTED not in FINDINGS and not Verdict.UNSUPPORTED.is_finding
    # neither pass nor bug: the invalid-program tier, below findings and unknown, above ok
    assert Verdict.UNSUPPORTED.severity[0] == Verdict.INVALID_PROGRAM.severity[0]
    assert Verdict.UNKNOWN.severity < Verdict.UNSUPPORTED.severity < Verdict.OK.severity
    assert Verdict.CRASH.severity < Verdict.UNSUPPORTED.severity


def test_every_rule_names_its_pytorch_source():
    rules = [r.rule for r in REFUSALS]
    assert len(rules) == len(set(rules))
    for r in REFUSALS:
        assert r.why and r.source and (r.types or r.pattern), r.rule


def test_dynamo_unsupported_and_its_subclasses_are_refusals():
    from torch._dynamo.exc import Unsupported

    class Narrower(Unsupported):  # the rule matches along the MRO
        pass

    for exc in (Unsupported("generator not supported"), Narrower("x")):
        assert _rule("inductor", _failure_of(exc, "trace")) == "dynamo-unsupported"
    # wrapped explicitly (raise ... from): the cause's types count
    try:
        try:
            raise Unsupported("call_method not supported")
        except Unsupported as inner:
            raise RuntimeError("backend raised") from inner
    except RuntimeError as outer:
        assert _rule("aot_eager", _failure_of(outer, "trace")) == "dynamo-unsupported"


@pytest.mark.parametrize(
    ("error_type", "message", "rule"),
    [
        ("NotImplementedError", "bitcast torch.float16 to torch.uint8 is not supported yet",
         "not-implemented"),
        ("InductorError", "LoweringException: NotImplementedError: inductor does not support "
         "layout=torch.sparse_coo", "not-implemented"),
        # a NotImplementedError that does not say "not supported" is no documented refusal
        ("NotImplementedError", "", None),
        # a wrong exception type out of a lowering is a crash
        ("InductorError", "LoweringException: TypeError: torch.bool is not supported by "
         "torch.iinfo", None),
        # ATen's internal-overlap error where eager ran: the compiler made the overlap
        ("RuntimeError", "unsupported operation: more than one element of the written-to "
         "tensor refers to a single memory location.", None),
        ("AssertionError", "incorrect out shape after application of ViewMeta sequence", None),
        # second audit: functionalization's documented ban, the workaround in its message
        ("BackendCompilerFailed", "backend='backend' raised:\nRuntimeError: During "
         "torch.compile, encountered a mutation on a view chain of length 2, where view 1 was "
         "an as_strided() call. as_strided() is non-compositional, and therefore is not "
         "possible to functionalize properly today,so this behavior is banned in compile.",
         "functionalize-as-strided-view-chain"),
    ],
)
def test_not_supported_needs_a_not_implemented_error_saying_so(error_type, message, rule):
    assert _rule("inductor", Failure("compile", error_type, message)) == rule


def test_by_design_limits_are_refusals_of_their_pipeline_only():
    fx = Failure("trace", "RuntimeError", "Found a custom (non-ATen) operator whose output has "
                 "alias annotations: aliasfuzz::add_one_")
    assert _rule("fx-reinplace", fx) == "functionalize-mutable-custom-op"
    assert _rule("aot_eager", fx) is None
    cpu = Failure("compile", "InductorError", "RuntimeError: 0 compatible backends for target (cpu)")
    assert _rule("inductor", cpu) == "inductor-cpu-user-triton"
    assert _rule("inductor-reinplace", cpu) is None


def test_torchscript_frontend_rejections_are_refusals_but_internal_asserts_crash():
    from aliasfuzz.oracle.ts_invariants import judge as judge_ts

    def ts(message: str) -> tuple[Verdict, str]:
        ex = Execution(pipeline="torchscript", device="cpu", extra={"options": {}})
        ex.failure = Failure("trace", "Unscriptable", message)
        return judge_ts(ex)

    v, why = ts("frontend: undefined value fz_flat_add:")
    assert v is Verdict.UNSUPPORTED and why.startswith("torchscript-frontend: ")
    v, why = ts("statement 2: view_dtype (view) is not scriptable")
    assert v is Verdict.UNSUPPORTED and why.startswith("torchscript-unscriptable-op: ")
    v, why = ts("frontend: r INTERNAL ASSERT FAILED at torch/csrc/jit/frontend/ir_emitter.cpp")
    assert v is Verdict.CRASH and "INTERNAL ASSERT" in why


@pytest.mark.parametrize("entry", VIEW_DTYPE_ENTRIES)
def test_view_dtype_under_torchscript_is_refused_by_rule_torchscript_unscriptable_op(entry):
    # Tensor.view(dtype) "is not supported by TorchScript, and using it in a Torchscript
    # program will cause undefined behavior" (torch/_tensor_docs.py): TorchScript reads the
    # dtype as an int size, so the run may raise or silently reshape; never a finding
    p = Program.loads((NOT_FINDINGS / entry / "program.json").read_text())
    j = judge(p, "torchscript")
    assert (j.verdict, j.check) == (Verdict.UNSUPPORTED, "unsupported"), j.explanation
    assert j.explanation.startswith("torchscript-unscriptable-op: ")
    assert "view_dtype" in j.explanation
    # the other pipelines still judge the program (view(dtype) is fine there)
    assert judge(p, "aot_eager").verdict is Verdict.OK


@torch.library.custom_op("aliasfuzz_test_refusals::picky", mutates_args=())
def picky(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@picky.register_fake
def _(x):
    raise NotImplementedError("picky: tracing is not supported")


def test_a_pipeline_raising_a_not_supported_error_is_unsupported_end_to_end():
    # make_fx (no Dynamo to graph-break on it) traces the fake kernel and raises
    j = judge(lambda x: picky(x) + 1, "fx-reinplace", inputs=lambda: (torch.arange(3.0),))
    assert (j.verdict, j.check) == (Verdict.UNSUPPORTED, "unsupported"), j.explanation
    assert j.explanation.startswith("not-implemented: ")
    assert not j.verdict.is_finding


def test_a_write_back_refused_for_an_overlapping_input_is_a_refusal_only_then():
    # second audit (00af3b6014, 70424add4e): x0 has strides (0, 0, 4); eager writes one
    # element, AOTAutograd's write-back copy_ into the whole input is refused by ATen
    msg = Failure("compile", "RuntimeError", "unsupported operation: more than one element "
                  "of the written-to tensor refers to a single memory location. Please clone() "
                  "the tensor before performing the operation.")
    expanded = torch.arange(4.0).as_strided((3, 2, 2), (0, 0, 1))
    dense = torch.arange(12.0).reshape(3, 2, 2)
    assert classify("aot_eager", msg, (dense, expanded)).rule == "internal-overlap-input-write-back"
    # no overlapping input: the compiler made the overlap, a crash
    assert classify("aot_eager", msg, (dense,)) is None
    assert classify("aot_eager", msg) is None


@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor"])
def test_mixed_dtype_aliased_input_mutation_is_aot_autograds_documented_limit(pipeline):
    # ninth campaign 63f507a08e (its auditor: a known limitation, pytorch/pytorch#194747):
    # a graph break hands the next graph an input and its int32 view as two inputs
    entry = NOT_FINDINGS / "crash-functionalization-63f507a08e"
    program = Program.loads((entry / "program.json").read_text())
    j = judge(program, pipeline)
    assert j.verdict is Verdict.UNSUPPORTED, j.explanation
    assert j.explanation.startswith("aot-mixed-dtype-aliased-input-mutation"), j.explanation
    # the message alone, as any pipeline raises it, is the rule; another AOTAutograd
    # assertion stays a crash
    said = Failure("trace", "AssertionError", "aot_autograd() does not yet handle input "
                   "mutations on views with different dtypes.")
    assert _rule("inductor-reinplace", said) == "aot-mixed-dtype-aliased-input-mutation"
    other = Failure("trace", "AssertionError", "incorrect out shape after application of ViewMeta sequence")
    assert _rule("inductor-reinplace", other) is None


def test_an_autograd_error_while_tracing_the_joint_graph_is_a_refusal_only_with_grad_inputs():
    import torch

    from aliasfuzz.passes.execution import Failure

    e = RuntimeError("Function ScatterBackward0 returned an invalid gradient at index 1")
    f = Failure.of("trace", e)
    leaf = torch.ones(2).requires_grad_()
    assert classify("aot_eager", f, (leaf,)).rule == "joint-graph-autograd"
    assert classify("aot_eager", f, (torch.ones(2),)) is None  # no backward traced: a crash
    # the backward's own call raising is a crash of the grads check, never this refusal
    assert classify("aot_eager", Failure.of("backward", e), (leaf,)) is None


def test_a_set_of_an_input_with_other_mutations_is_a_refusal():
    """AOTAutograd's 'not supported today' for set_ of an input whose other mutations it
    cannot keep in the graph (issue 15's set_ row: ``v2.set_(v1); v2.add_(1)`` on an input
    ``x1`` that an earlier statement wrote); another AOTAutograd assertion stays a crash."""
    from aliasfuzz.passes.execution import Failure

    said = Failure("trace", "AssertionError", "Encountered a set_ on a graph input, but the input "
                   "has other mutations that we cannot\nkeep in the graph. This is not supported "
                   "today. Current state:\n  keep_input_mutations=True")
    assert _rule("aot_eager", said) == "aot-set-input-with-other-mutations"
    other = Failure("trace", "AssertionError", "Encountered a set_ on a graph input")
    assert _rule("aot_eager", other) is None


@pytest.mark.parametrize("name,rule", [
    ("crash-decomposition-bdf17677d9", "fx-untyped-storage-argument"),
    ("crash-functionalization-5986472bef", "functorch-requires-grad-inside-transform"),
])
def test_fx_reinplace_refusing_set_storage_and_requires_grad_is_unsupported(name, rule):
    """Audit 21's two false positives (campaign 21: crash-decomposition-bdf17677d9,
    crash-functionalization-5986472bef): make_fx has no FX argument for an UntypedStorage,
    and functionalize refuses requires_grad_() by design; both are refusals of fx-reinplace
    only (aot_eager runs the same programs)."""
    from aliasfuzz.campaign import _judge

    program = Program.loads((NOT_FINDINGS / name / "program.json").read_text())
    fx = _judge.evaluate(program, "fx-reinplace", "cpu")
    assert fx["verdict"] == Verdict.UNSUPPORTED.value, fx["explanation"]
    assert fx["explanation"].startswith(f"{rule}: "), fx["explanation"]
    assert _judge.evaluate(program, "aot_eager", "cpu")["verdict"] == Verdict.OK.value


def test_a_branch_on_a_tensor_value_is_a_make_fx_refusal_on_fx_reinplace_only():
    # audit 26: crash-decomposition-a251a9759d, `if x[0] < 10: x.add_(0)` on fx-reinplace,
    # was filed as a crash of PyTorch; make_fx's fake tracing cannot follow the branch
    # (every torch.compile pipeline graph-breaks there and agrees with eager)
    seed = Path(__file__).resolve().parents[2] / "corpus" / "seeds" / "b13_view_alias_across_graph_break.json"
    p = Program.loads(seed.read_text())
    j = judge(p, "fx-reinplace")
    assert j.verdict is Verdict.UNSUPPORTED, (j.verdict, j.explanation)
    assert j.explanation.startswith("make-fx-data-dependent-branch"), j.explanation
    # the same error raised from a decomposition, not from the program's own branch: a crash
    deco = Failure("trace", "GuardOnDataDependentSymNode",
                   "Could not guard on data-dependent expression Eq(u0, 1)\nCaused by: "
                   "(_decomp/decompositions.py:2345 in index_put_impl)",
                   ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",))
    assert _rule("fx-reinplace", deco) is None
    own = Failure("trace", deco.error_type, deco.message.replace(
        "_decomp/decompositions.py:2345 in index_put_impl",
        "fx/experimental/proxy_tensor.py:1823 in __torch_function__"), deco.kinds)
    assert _rule("fx-reinplace", own) == "make-fx-data-dependent-branch"
    assert _rule("aot_eager", own) is None


@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor"])
def test_a_write_after_set_into_a_frozen_storage_is_functionalizations_ban(pipeline):
    """Audit 43's not-a-bug 3a806c5433: ``y = x.add_(1); y.set_(x); y.add_(1)``. ``set_``
    freezes the old storage, which is also the new one here, and functionalization refuses
    the write after it ("cannot mutate tensors with frozen storage"), as PyTorch's own
    test_set__not_allowed expects; another functionalization error stays a crash."""
    from aliasfuzz.passes.execution import Failure

    program = Program.loads((NOT_FINDINGS / "crash-functionalization-3a806c5433" / "program.json").read_text())
    j = judge(program, pipeline)
    assert j.verdict is Verdict.UNSUPPORTED, j.explanation
    assert j.explanation.startswith("functionalize-set-frozen-storage"), j.explanation
    other = Failure("trace", "RuntimeError", "cannot mutate tensors with overlapping storage")
    assert _rule(pipeline, other) is None
