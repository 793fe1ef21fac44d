"""One eager meaning: each validation rule rejects a program that names it, the corpus
programs that rested on an undefined eager result are rejected by ``overlapping-writes``, and
what PyTorch defines (disjoint sibling views, a Triton launch given one tensor twice without
racing lanes, an operand read and written whole) stays valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.ops import REGISTRY, lookup
from aliasfuzz.fuzz.ops._inplacegen import ok_foreach
from aliasfuzz.fuzz.ops.core import OpKind, ValueMeta
from aliasfuzz.fuzz.validate import RULE_NAMES, RULES, NoEagerMeaning, infer
from tests.common import audit
from tests.common.validation import rejection_rule

ROOT = Path(__file__).resolve().parents[2]
NOT_FINDINGS = ROOT / "tests" / "data" / "not_findings"
SEEDS = ROOT / "corpus" / "seeds"


def _program(body, inputs=None, storages=None, outputs=()) -> Program:
    storages = storages or (StorageSpec("s", 16),)
    inputs = inputs or (TensorSpec("x", "s", (8,), (1,)),)
    return Program(tuple(storages), tuple(inputs), tuple(body), tuple(outputs))


_HALVES = (TensorSpec("x", "s", (8,), (1,)), TensorSpec("lo", "s", (4,), (1,), 0),
           TensorSpec("hi", "s", (4,), (1,), 4), TensorSpec("mid", "s", (4,), (1,), 2))

# rule name -> a program breaking it (and nothing before it)
BREAKS = {
    "self-overlapping-write": _program([
        Op("select", ("x",), {"dim": 0, "index": 0}, ("e",)),
        Op("expand", ("e",), {"size": [4]}, ("wide",)),
        Op("add_.Scalar", ("wide",), {"other": 1.0}, ("w2",)),
    ]),
    "overlapping-writes": _program(
        [Op("_foreach_add_.Scalar", ("lo", "mid"), {"other": 0.5}, ())], _HALVES
    ),
    "partial-read-write-overlap": _program([Op("add_", ("lo", "mid"), {}, ("r",))], _HALVES),
    "racing-lanes": _program([Op("tk.flip_copy", ("x", "x"), {"grid": [1], "BLOCK": 8, "n": 8})]),
    "layout-readout": _program([
        Op("select", ("x",), {"dim": 0, "index": 1}, ("e",)),
        Op("fz.storage_layout", ("e",), {}, ("r",)),
    ]),
    "duplicate-index-writes": _program(
        [Op("index_put_", ("x", "v"), {"indices": [[0, 0]], "accumulate": False}, ("r",))],
        (TensorSpec("x", "s", (8,), (1,)), TensorSpec("v", "t", (2,), (1,))),
        (StorageSpec("s", 16), StorageSpec("t", 2)),
    ),
    "bool-bytes": _program(
        [Op("view_dtype", ("x",), {"dtype": "uint8"}, ("b",)),
         Op("add_.Scalar", ("b",), {"other": 1}, ("r",))],
        storages=(StorageSpec("s", 16, "bool", "zeros"),),
    ),
    "leaf-inplace": _program(
        [Op("add_.Scalar", ("x",), {"other": 1.0}, ("r",))],
        (TensorSpec("x", "s", (8,), (1,), requires_grad=True),),
    ),
    "autograd-grad": _program(  # y = sin(w) does not require grad
        [Op("sin", ("w",), {}, ("y",)), Op("autograd_grad", ("y", "x"), {"retain_graph": True}, ("g",))],
        (TensorSpec("x", "s", (8,), (1,), requires_grad=True), TensorSpec("w", "t", (8,), (1,))),
        (StorageSpec("s", 16), StorageSpec("t", 8)),
        ("g",),
    ),
    "multi-output-view": _program(  # x.chunk(2)[0] written in place
        [Op("neg", ("x",), {}, ("y",)), Op("chunk", ("y",), {"chunks": 2, "dim": 0}, ("a", "b")),
         Op("add_.Scalar", ("a",), {"other": 1.0}, ("r",))],
        (TensorSpec("x", "s", (8,), (1,), requires_grad=True),),
    ),
}


def test_every_rule_has_a_breaking_program():
    assert set(BREAKS) == set(RULE_NAMES)
    assert [r.name for r in RULES] == list(RULE_NAMES[: len(RULES)])


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_rule_rejects_its_program_by_name(rule):
    if rule == "racing-lanes" and "tk.flip_copy" not in REGISTRY:
        pytest.skip("triton is not installed: no launch rows")
    program = BREAKS[rule]
    assert rejection_rule(program) == rule
    with pytest.raises(NoEagerMeaning) as e:
        infer(program)
    assert "statement " in str(e.value)
    if rule != "layout-readout":  # its message is "statement i: layout-readout: ..."
        summary = str(e.value).split("; ")[0]
        assert summary == e.value.summary  # the countable first clause is the rule's, fixed


def test_foreach_on_one_tensor_twice_is_overlapping_writes():
    # the audit's reduction: torch._foreach_add_([v, v], 0.5)
    p = _program([Op("neg", ("x",), {}, ("v",)), Op("_foreach_add_.Scalar", ("v", "v"), {"other": 0.5}, ())])
    assert rejection_rule(p) == "overlapping-writes"
    # disjoint entries of one storage are fine
    infer(_program([Op("_foreach_add_.Scalar", ("lo", "hi"), {"other": 0.5}, ())], _HALVES))


def test_one_empty_tensor_written_twice_is_overlapping_writes():
    # no byte is shared, but both writes (and out='s resizes) go to one tensor
    ins = (TensorSpec("x", "s", (0, 3), (3, 1)), TensorSpec("e", "t", (0,), (1,)))
    st = (StorageSpec("s", 0), StorageSpec("t", 0))
    p = _program([Op("aminmax.out", ("x", "e", "e"), {"dim": 1}, ("m", "n"))], ins, st)
    assert rejection_rule(p) == "overlapping-writes"
    e = ValueMeta((0,), (1,), 0, "float32", "t", 0)
    assert not ok_foreach((e, e))


def test_two_out_tensors_overlapping_is_overlapping_writes():
    ins = (TensorSpec("x", "s", (2, 3), (3, 1)), TensorSpec("a", "t", (3,), (1,)),
           TensorSpec("b", "t", (3,), (1,), 3), TensorSpec("c", "t", (3,), (1,), 1))
    st = (StorageSpec("s", 6), StorageSpec("t", 6))
    body = lambda lo, hi: [Op("aminmax.out", ("x", lo, hi), {"dim": 0}, ("m", "n"))]  # noqa: E731
    assert rejection_rule(_program(body("a", "a"), ins, st)) == "overlapping-writes"
    assert rejection_rule(_program(body("a", "c"), ins, st)) == "overlapping-writes"
    ok = _program(body("a", "b"), ins, st, ("m", "n"))
    infer(ok)
    lo, hi = run_eager(ok).outputs
    assert lo.tolist() == [0.0, 1.0, 2.0] and hi.tolist() == [3.0, 4.0, 5.0]


def test_custom_op_with_two_mutable_arguments_on_overlapping_views():
    assert rejection_rule(_program([Op("fz.bump_pair", ("lo", "mid"), {}, ())], _HALVES)) == "overlapping-writes"
    assert rejection_rule(_program([Op("fz.bump_pair", ("x", "x"), {}, ())])) == "overlapping-writes"
    infer(_program([Op("fz.bump_pair", ("lo", "hi"), {}, ())], _HALVES))  # sibling views: b09


def test_an_operand_read_and_written_whole_is_defined():
    infer(_program([Op("add_", ("x", "x"), {}, ("r",)), Op("addcmul_", ("x", "x", "x"), {"value": 2}, ("q",))]))


def test_undecidable_overlap_is_rejected_conservatively():
    big = 1 << 17  # two different layouts over more than ENUM_LIMIT elements
    st = (StorageSpec("s", 2 * big + 2),)
    ins = (TensorSpec("a", "s", (big,), (2,)), TensorSpec("b", "s", (big,), (2,), 1))
    p = _program([Op("_foreach_add_.Scalar", ("a", "b"), {"other": 1.0}, ())], ins, st)
    with pytest.raises(NoEagerMeaning, match="cannot decide"):
        infer(p)
    # identical layouts and disjoint spans are decided without enumeration, at any size
    same = _program([Op("_foreach_add_.Scalar", ("a", "a"), {"other": 1.0}, ())], ins, st)
    assert rejection_rule(same) == "overlapping-writes"
    infer(_program([Op("add_.Scalar", ("a",), {"other": 1.0}, ("r",))], ins, st))


def test_malformed_programs_stay_plain_invalid_argument():
    with pytest.raises(InvalidArgument) as e:
        infer(_program([Op("add_", ("x", "nope"), {}, ("r",))]))
    assert not isinstance(e.value, NoEagerMeaning)


# -- the corpus entries that rested on an undefined eager result -----------------------------
#: the audit's entries of root foreach-same-tensor-twice, from their frozen data files
FOREACH = [p.stem for p in audit.data_paths()
           if "foreach-same-tensor-twice" in audit.record_of(p.stem)["root"]]
#: former TorchScript corpus entries of the same program (not in the audit table)
TORCHSCRIPT = ["miscompile-torchscript-5285b6d7a2", "miscompile-torchscript-7831e9bebb"]


@pytest.mark.skipif(not audit.AUDIT.is_file(), reason="shared/audit is not checked out")
def test_the_audit_has_seven_foreach_same_tensor_twice_rows():
    rows = [r for r in audit.rows() if "foreach-same-tensor-twice" in r.roots]
    assert sorted(r.entry for r in rows) == sorted(FOREACH) and len(FOREACH) == 7
    assert all(r.label == "false-positive" for r in rows)


@pytest.mark.parametrize("entry", FOREACH + TORCHSCRIPT)
def test_former_corpus_program_is_rejected_by_overlapping_writes(entry):
    if entry in TORCHSCRIPT:
        program = Program.loads((NOT_FINDINGS / entry / "program.json").read_text())
    else:
        program = audit.program_of(entry)
    assert rejection_rule(program) == "overlapping-writes"
    assert not (ROOT / "corpus" / entry).exists()  # no longer a finding: out of corpus/


def test_judge_calls_a_rejected_program_invalid_with_therejection_rule():
    from aliasfuzz.oracle.judge import judge

    program = audit.program_of("miscompile-aot_eager-0a97464375")
    j = judge(program, "aot_eager")
    assert (j.verdict.value, j.check) == ("invalid-program", "overlapping-writes")
    assert j.explanation.startswith("two written operands of one op overlap; statement ")


# -- what stays valid ---------------------------------------------------------------------
def test_b09_sibling_views_twin_is_valid_and_judged_ok():
    from aliasfuzz.oracle.judge import judge

    twin = Program.loads((SEEDS / "b09_custom_ops_on_sibling_views.json").read_text())
    infer(twin)
    assert judge(twin, "aot_eager").verdict.value == "ok"


def test_b15_one_tensor_in_two_written_triton_arguments_stays_valid():
    twin = Program.loads((SEEDS / "b15_triton_same_tensor_two_mutated_args.json").read_text())
    if not any(lookup(op.op).kind is OpKind.TRITON for op in twin.body):
        pytest.fail("b15's twin lost its launch")
    typed = infer(twin)
    (step,) = typed.steps
    assert step.args[0] == step.args[1]  # the very same tensor, written through both


def test_generator_filter_keeps_foreach_entries_disjoint():
    v = ValueMeta((4,), (1,), 0, "float32", "s", 64)
    assert not ok_foreach((v, v))
    assert not ok_foreach((v, v.view((2,), (1,), 2)))
    assert ok_foreach((v.view((2,), (1,), 0), v.view((2,), (1,), 2)))


def test_a_scatter_of_a_self_overlapping_base_has_no_eager_meaning():
    # second audit, 26ee7c642f: select_scatter copies x2 keeping its overlapping strides
    # (1, 3) and writes row 3 of the copy, which also changes [0, 1]
    from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
    from aliasfuzz.fuzz.ops.core import NoEagerMeaning

    def prog(shape, stride):
        return Program(
            (StorageSpec("s0", 16), StorageSpec("s1", 2)),
            (TensorSpec("x2", "s0", shape, stride, 4), TensorSpec("x1", "s1", (2,), (1,))),
            (Op("select_scatter", ("x2", "x1"), {"dim": 0, "index": 3}, ("v",)),),
            ("v",),
        )

    with pytest.raises(NoEagerMeaning) as e:
        prog((4, 2), (1, 3)).validate()
    assert e.value.rule == "self-overlapping-write" and "fresh result" in str(e.value)
    prog((4, 2), (2, 1)).validate()  # a base without internal overlap: one meaning


def test_a_tensor_of_no_elements_aliases_nothing():
    # eighth audit e65ce44d27 (not reproduced by its repro): Inductor returns a 0-element
    # input itself where eager's slice_scatter returns a fresh empty tensor; no value can
    # be read or written through either, so the aliasing check has nothing to compare
    import torch

    from aliasfuzz.campaign import _judge
    from aliasfuzz.fuzz.eager import alias_map

    empty, full = torch.empty(4, 0), torch.ones(2)
    assert alias_map((empty, full[0:0], full), (empty, full), ("x0", "x1")) == {
        "out0": (), "out1": (), "out2": ("x1",)}
    p = Program.loads((NOT_FINDINGS / "miscompile-reinplace-e65ce44d27" / "program.json").read_text())
    for pipeline in ("inductor-reinplace", "inductor"):
        out = _judge.evaluate(p, pipeline, "cpu")
        assert out["verdict"] in ("ok", "unknown"), (pipeline, out["explanation"])
