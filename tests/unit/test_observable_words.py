"""A finding's headline names the observable that differs, derived from the judge's check and
its mismatch, never from the verdict or a known bug's text (issue 12, fourth audit a649b9362b).

``miscompile-decomposition-a649b9362b`` (program in ``tests/data/repro_words``): eager
``F.dropout(x2, training=False)`` returns ``x2`` itself, so the later ``x2.add_(1)`` shows in
the output; compiled dropout clones. ``x2`` is updated in both; what differs is the output,
through aliasing. Its repro had printed pytorch#195422's ``why`` ("the lost input update is
the claim"), true only of sightings that mutate through the dropout result.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from aliasfuzz.campaign import repro as R
from aliasfuzz.campaign._repro_words import effect, known_lines, observable, title
from aliasfuzz.campaign.known import KnownBug, load_known
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.oracle.judge import judge
from aliasfuzz.report.upstream import render_draft

ENTRY = Path(__file__).resolve().parents[1] / "data" / "repro_words" / "miscompile-decomposition-a649b9362b"
ROOT = Path(__file__).resolve().parents[2]


def _entry() -> tuple[Program, dict]:
    return (Program.loads((ENTRY / "program.json").read_text()),
            json.loads((ENTRY / "meta.json").read_text()))


def _doc(text: str) -> list[str]:
    return (ast.get_docstring(ast.parse(text)) or "").splitlines()


def _judged_meta(program: Program, meta: dict, pipeline: str = "aot_eager") -> dict:
    """The entry's meta with what the judge says now (check and explanation), as a campaign
    writes it, and the ``known`` item as ``known.toml`` has it now."""
    j = judge(program, pipeline)
    assert j.verdict.value == "miscompile", j.explanation
    bug = next(b for b in load_known(ROOT / "corpus") if b.issue == "pytorch/pytorch#195422")
    own = {"pipeline": pipeline, "verdict": "miscompile", "check": j.check,
           "explanation": j.explanation, "program": program.to_json()}
    return {**meta, "expected": {"pipeline": pipeline, "verdict": "miscompile", "check": j.check},
            "explanation": j.explanation, "known": bug.to_json(), "hits": [own]}


@pytest.fixture(scope="module")
def aliased():
    program, meta = _entry()
    return program, _judged_meta(program, meta)


def test_the_judge_says_the_output_differs_through_aliasing_and_inputs_agree(aliased):
    _, meta = aliased
    assert meta["expected"]["check"] == "values"
    assert meta["explanation"] == (
        "out0: values differ at [0]: 6.0 in eager, 5.0 compiled; out0 aliases x2 in eager but "
        "is fresh compiled; every input agrees after the call")
    assert observable(meta) == "aliasing"


def test_the_repro_headline_names_the_aliased_output_not_a_lost_input_update(aliased):
    program, meta = aliased
    doc = _doc(R.render_repro(program, meta))
    assert doc[0].startswith("known upstream: pytorch/pytorch#195422")
    assert doc[1] == (
        "[aot_autograd] decomposition returns out0 as a copy where eager's out0 shares storage "
        "with x2, so a later in-place write to x2 shows in eager's out0 only (every input agrees "
        "after the call): out0: values differ at [0]: 6.0 in eager, 5.0 compiled")
    text = " ".join(doc)
    # the known bug's why describes a lost input update: not this sighting's observable
    assert "Why it is a bug" not in text and "lost input update" not in text
    assert "mutates an input" not in text


def test_the_upstream_draft_says_the_same(aliased):
    program, meta = aliased
    md = render_draft(program, meta)
    assert md.splitlines()[0] == "# " + R.title(meta)
    assert "returns out0 as a copy where eager's out0 shares storage with x2" in md
    assert "lost input update" not in md
    desc = md.split("### 🐛 Describe the bug", 1)[1].split("Where it breaks", 1)[0]
    assert desc.count("aliases x2 in eager") == 0  # said once, in words, not twice


def test_mutating_through_the_dropout_result_is_the_lost_input_update_and_keeps_the_why():
    # v2 = dropout(x2); v2.add_(1): eager updates x2 through v2, compiled updates a clone
    program, meta = _entry()
    body = (program.body[0], Op("add_.Scalar", ("v2",), {"other": 1.0}, ("v6",)))
    through = program.with_body(body, ())
    meta = _judged_meta(through, meta)
    assert meta["expected"]["check"] == "inputs", meta["explanation"]
    assert observable(meta) == "inputs"
    doc = _doc(R.render_repro(through, meta))
    assert doc[1].startswith("[aot_autograd] decomposition mutates an input differently from "
                             "eager: input x2: values differ")
    assert "the lost input update is." in " ".join(doc)
    assert len(known_lines(meta)) == 2


@pytest.mark.parametrize(
    ("note", "words"),
    [
        ("out1 is fresh in eager but aliases x0 compiled",
         "returns out1 sharing storage with x0 where eager's out1 is fresh, so a later in-place "
         "write to x0 shows in the compiled out1 only"),
        ("out0 aliases out1, x in eager but aliases y compiled",
         "returns out0 sharing storage with y where eager's out0 shares it with out1, x"),
    ],
)
def test_other_aliasing_directions_are_named_too(note, words):
    said = f"out0: values differ at [1]: 2.0 in eager, 1.0 compiled; {note}"
    meta = {"expected": {"verdict": "miscompile", "check": "values"}, "explanation": said}
    assert effect(meta) == words
    assert R.title(meta, "aot_eager").endswith(": out0: values differ at [1]: 2.0 in eager, 1.0 compiled")


def test_a_plain_values_mismatch_keeps_its_words():
    meta = {"expected": {"verdict": "miscompile", "check": "values"},
            "explanation": "out0: values differ at [0]: 1.0 in eager, 2.0 compiled"}
    assert (effect(meta), observable(meta)) == ("returns wrong values", "values")


def test_a_signal_death_is_named_as_a_death_and_heap_corruption_first():
    heap = {"expected": {"verdict": "crash", "check": "signal:SIGABRT"},
            "explanation": "inductor corrupts the heap (an out-of-bounds write): ..."}
    assert effect(heap) == ("corrupts the heap where eager does not (an out-of-bounds write; "
                            "SIGABRT)")
    static = {"expected": {"verdict": "crash", "check": "out-of-bounds"},
              "explanation": "inductor writes out of bounds: Inductor's wrapper made "
                             "reinterpret_tensor(buf, ...) ... The worker had died of it: glibc found "
                             "the heap corrupted"}
    assert effect(static) == ("writes out of bounds where eager does not (a view past its "
                              "storage in Inductor's wrapper)")
    segv = {"expected": {"verdict": "crash", "check": "signal:SIGSEGV"},
            "explanation": "worker died (signal:SIGSEGV) while running the program"}
    assert effect(segv) == "kills the process (SIGSEGV) where eager does not"
    raised = {"expected": {"verdict": "crash", "check": "exceptions"},
              "explanation": "compiled raises RuntimeError: x; eager does not"}
    assert effect(raised) == "raises where eager does not"


def test_an_old_entry_without_checks_in_its_known_item_uses_known_toml():
    program, meta = _entry()  # written before checks existed: its known item has none
    assert "checks" not in meta["known"]
    assert observable(meta) == "values"  # its explanation predates the aliasing note
    assert known_lines(meta) == [known_lines(meta)[0]]  # the inputs why is not printed
    assert "Why it is a bug" not in R.render_repro(program, meta)


def test_known_toml_checks_are_validated(tmp_path):
    (tmp_path / "known.toml").write_text(
        '[[bug]]\nissue = "x#1"\ntitle = "t"\nstage = "decomposition"\nwhy = "w"\n'
        'checks = ["outputs"]\n')
    with pytest.raises(InvalidArgument, match="unknown check"):
        load_known(tmp_path)
    bug = KnownBug("x#1", "t", "decomposition", why="w", checks=("inputs",))
    assert bug.to_json()["checks"] == ["inputs"]


@pytest.mark.parametrize(("said", "detail"), [
    ("compiled raises _Failed: trace: BackendCompilerFailed: backend='backend' raised: "
     "ZeroDivisionError: integer modulo by zero; eager does not",
     "ZeroDivisionError: integer modulo by zero (while compiling)"),
    ("compiled raises _Failed: run: IndexError: Dimension out of range (expected to be in "
     "range of [-1, 0], but got 1); eager does not",
     "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1) (when run)"),
])
def test_a_crash_title_quotes_the_error_not_the_wrappers_every_crash_shares(said, detail):
    # thirteenth session's nit: titles began "compiled raises _Failed: trace:
    # BackendCompilerFailed: backend='backend' raised:" and cut the error itself off
    meta = {"root": {"stage": "functionalization"}, "explanation": said,
            "expected": {"pipeline": "aot_eager", "verdict": "crash", "check": "exceptions"}}
    got = title(meta)
    assert got.endswith(f": {detail}") and "_Failed" not in got and "backend=" not in got, got


@pytest.mark.parametrize(
    ("check", "said", "words"),
    [
        ("values", "out0: shape (4, 4) in eager, (1, 4, 4) compiled",
         "returns out0 with the wrong shape (values not compared)"),
        ("values", "out1: dtype torch.float32 in eager, torch.float64 compiled",
         "returns out1 with the wrong dtype (values not compared)"),
        ("inputs", "input x0: shape (4,) in eager, (2, 2) compiled",
         "leaves input x0 with the wrong shape (values not compared)"),
        ("values", "2 outputs in eager, 1 compiled", "returns another number of outputs than eager"),
    ],
)
def test_a_shape_or_dtype_mismatch_is_not_called_wrong_values(check, said, words):
    # fresh user 21: resize_as_ of a view, only out0's shape differs, titled "wrong values"
    meta = {"expected": {"verdict": "miscompile", "check": check, "pipeline": "fx-reinplace"},
            "root": {"stage": "functionalization"}, "explanation": said}
    assert effect(meta) == words
    head = R.title(meta)
    assert head == f"[functorch] torch.func.functionalize {words}: {said}"
    assert "wrong values" not in head
    # the same check with a values mismatch keeps its words
    where = "input x0" if check == "inputs" else "out0"
    values = {**meta, "explanation": f"{where}: values differ at [0]: 1.0 in eager, 2.0 compiled"}
    assert effect(values) in ("returns wrong values", "mutates an input differently from eager")


def test_a_crash_when_run_is_the_blamed_stage_making_the_program_raise():
    # audit 40, 3326c5ee66: "reinplace_inplaceable_ops raises" where eager code after a graph
    # break raised on the alias the pass had returned
    said = ("compiled raises _Failed: run: RuntimeError: unsupported operation: some elements "
            "refer to a single memory location; eager does not")
    meta = {"expected": {"verdict": "crash", "check": "exceptions", "pipeline": "inductor"},
            "root": {"stage": "reinplace"}, "explanation": said}
    assert R.title(meta).startswith(
        "[inductor] reinplace_inplaceable_ops makes the compiled program raise when run, "
        "where eager does not: RuntimeError: unsupported operation")
    compiling = dict(meta, explanation=said.replace("_Failed: run:", "_Failed: compile:"))
    assert effect(compiling) == "raises where eager does not"
    for stage in ("aot-runtime", "unblamed:inductor"):  # the wrappers raised; no stage cut
        assert effect(dict(meta, root={"stage": stage})) == "raises where eager does not"


def test_the_aot_runtime_stage_words_name_no_one_wrapper():
    # audit 40, 761a24f5b4: a one-input program has no synthetic base
    comp, words = R.stage_words("aot-runtime")
    assert comp == "aot_autograd" and "synthetic" not in words and "runtime wrappers" in words


def test_a_torchscript_crash_of_the_graph_run_is_the_stage_making_the_program_raise():
    # audit 42, 5401fed675: "graph passes (fused kernels off) raises" for an error that the
    # TorchScript interpreter raised running the optimized graph; fresh user 49 (B12): a
    # plural subject with "makes": the stage is the graph optimization
    said = ("legacy call 0 (optimized) raised RuntimeError: Autograd not support dtype: Bool\n"
            "The following operation failed in the TorchScript interpreter.\n | profiling: ok, "
            "legacy: crash, simple: ok")
    meta = {"expected": {"verdict": "crash", "check": "torchscript", "pipeline": "torchscript"},
            "root": {"stage": "ts-optimizer"}, "explanation": said}
    assert R.title(meta).startswith("[jit] legacy TorchScript executor's graph optimization (fused kernels "
                                    "off) makes the compiled program raise when run, where eager does not")


@pytest.mark.parametrize("executors,scope", [
    ("profiling: ok, legacy: crash, simple: ok", "legacy "),
    ("profiling: miscompile, legacy: ok, simple: ok", "profiling "),
    ("profiling: miscompile, legacy: miscompile, simple: ok", ""),
])
def test_a_torchscript_title_names_the_one_executor_that_departs(executors, scope):
    # audit 43, 1ccd29630f: a legacy-executor-only crash titled as any executor's
    said = f"legacy call 0 (optimized) raised RuntimeError: boom | {executors}"
    meta = {"expected": {"verdict": "crash", "check": "torchscript", "pipeline": "torchscript"},
            "root": {"stage": "ts-optimizer"}, "explanation": said}
    assert R.title(meta).startswith(f"[jit] {scope}TorchScript executor's graph optimization"), R.title(meta)


def test_the_aot_stage_words_name_aotautograd_as_inductor_calls_it_not_only_pre_grad():
    # audit 42, faf26743f1: "pre-grad passes raises in the backward" for a crash aot_eager shows
    comp, words = R.stage_words("aot")
    assert "AOTAutograd" in words and "pre-grad" in words


_ALIAS_ROW = ("departs (inputs: input x0: shape (3, 4) in eager, (3, 1) compiled; aliasing: graph "
              "output 0 shares graph input 0's storage where AOTAutograd's output metadata has it "
              "fresh (non_alias))")


def test_the_title_leads_with_the_alias_the_blamed_graph_made():
    # audit 43, 98e128b7e3: "leaves input x0 with the wrong shape", a set_ that eager code after a
    # graph break ran on the output the folded graph had returned as the input itself
    said = "input x0: shape (3, 4) in eager, (3, 1) compiled"
    meta = {"expected": {"verdict": "miscompile", "check": "inputs", "pipeline": "inductor"},
            "root": {"stage": "joint:constant_fold_uniform_value"}, "explanation": said,
            "trail": [["dynamo", "agrees"], ["joint:constant_fold_uniform_value", _ALIAS_ROW]]}
    assert R.title(meta) == (
        "[inductor] joint-graph pass constant_fold_uniform_value makes its graph return graph "
        "input 0's storage as fresh output 0 and leaves input x0 with the wrong shape (values "
        "not compared): " + said)
    # another stage's row (a stacked departure before the blamed one), or a row that agrees,
    # or a hit's sighting (another program than the trail's) leave the effect alone
    for trail in ([["reinplace", _ALIAS_ROW]],
                  [["joint:constant_fold_uniform_value", "agrees (" + _ALIAS_ROW[9:]]]):
        assert "graph input" not in R.title({**meta, "trail": trail})
    sighting = {"verdict": "miscompile", "check": "inputs", "explanation": said}
    assert "graph input" not in R.title(meta, sighting=sighting)


def test_the_title_reads_the_alias_words_the_cut_writes():
    # graph_alias parses passes.stages.fresh_output_aliasing_input's sentence: the two must
    # not drift apart (a reworded sentence would silently drop the alias from every title)
    import torch

    from aliasfuzz.campaign._repro_words import graph_alias
    from aliasfuzz.passes.stages import fresh_output_aliasing_input

    x = torch.arange(4.0)
    said = fresh_output_aliasing_input([torch.ones(2), x[1:]], [torch.zeros(3), x], fresh=(1,))
    meta = {"root": {"stage": "reinplace"}, "trail": [["reinplace", f"departs (inputs: ...; aliasing: {said})"]]}
    assert graph_alias(meta) == "makes its graph return graph input 1's storage as fresh output 1"
