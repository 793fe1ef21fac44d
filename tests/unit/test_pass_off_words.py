"""A repro whose blame the pass-off control moved says how it was found (audit 34).

``miscompile-joint-remove-noop-ops-4aa908be16``: every cut up to ``joint:remove_noop_ops``
agreed with eager, ``reinplace`` departed, and the pass-off control (disabling
``remove_noop_ops`` agrees, disabling the reinplace pass does not) moved the blame to
``remove_noop_ops``. Its repro called that stage "the first whose result departs from
eager", which its own trail contradicts; the auditor checked both controls by hand.
"""

from __future__ import annotations

import json

import pytest

from aliasfuzz.campaign.corpus import load_entry, record
from aliasfuzz.campaign.repro import moved_by_pass_off, pass_off_move, render_repro
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.oracle.blame import ALSO_FIXED_BY, ENABLED_BY, ERROR_GONE, Blame, pass_off
from passes.pipelines import PipelineOptions
from tests.common.repro_cases import CASES, meta_v2

CUTS = [("dynamo", "agrees"), ("aot", "agrees"), ("joint:remove_noop_ops", "agrees"),
        ("reinplace", "departs (values: out0: values differ)")]


def _blamed(agrees_without: str) -> Blame:
    """The reinplace pass's blame after the pass-off control, where the pipeline agrees
    with eager only when pass ``agrees_without`` is disabled."""
    def runner(opts: PipelineOptions) -> str:
        return "agrees" if agrees_without in str(opts) else "departs"

    return pass_off(Blame("reinplace", ("reinplace",), list(CUTS)), "inductor",
                    PipelineOptions(), runner)


def _meta(b: Blame, *, structured: bool = False) -> dict:
    """The meta of an entry blamed ``b``: ``structured``, with ``moved_by_pass_off`` as
    :func:`record` writes it; else as an entry written before that key."""
    program, _, _ = CASES["ok-aot_eager"]
    meta = meta_v2(program, "inductor", "miscompile", "values", b.stage,
                   explanation="out0: values differ")
    meta["trail"], meta["stages"] = [list(t) for t in b.trail], list(b.stages)
    if structured:
        meta["moved_by_pass_off"] = b.to_json()["moved_by_pass_off"]
    return meta


def _docstring(b: Blame, *, structured: bool = False, meta: dict | None = None) -> str:
    program, _, _ = CASES["ok-aot_eager"]
    meta = meta or _meta(b, structured=structured)
    return " ".join(render_repro(program, meta).split('"""')[1].split())


def test_a_blame_the_pass_off_control_moved_says_so():
    b = _blamed("REMOVE_NOOP_OPS")
    assert b.stage == "joint:remove_noop_ops", b
    assert moved_by_pass_off(b.trail, b.stage) == ("reinplace", True)
    text = _docstring(b)
    assert "the first whose result departs" not in text, text
    assert ("by the pass-off control: the result first departs from eager after reinplace, "
            "and disabling joint:remove_noop_ops removes that departure while disabling "
            "reinplace does not") in text, text


def test_a_blame_the_pass_off_control_confirmed_is_the_first_departure():
    b = _blamed("REINPLACE_INPLACEABLE_OPS")
    said = [what for st, what in b.trail if st == "pass-off"]
    assert b.stage == "reinplace" and said[-1].endswith("blame stands"), b
    assert moved_by_pass_off(b.trail, b.stage) is None
    assert "Blamed stage: reinplace (" in _docstring(b)
    assert "the first whose result departs from eager" in _docstring(b)


def test_the_pass_off_move_is_a_field_of_the_blame_and_the_renderer_reads_it():
    moved, stands = _blamed("REMOVE_NOOP_OPS"), _blamed("REINPLACE_INPLACEABLE_OPS")
    assert (moved.moved_from, moved.own_off) == ("reinplace", True)
    assert (stands.moved_from, stands.own_off) == (None, False)
    assert moved.to_json()["moved_by_pass_off"] == {"cut": "reinplace", "own_off": True}
    assert stands.to_json()["moved_by_pass_off"] is None
    # the cut blamed aot, which has no pass of its own to disable first
    aot = pass_off(Blame("aot", ("aot",), [("dynamo", "agrees"), ("aot", "departs (values)"),
                                           ("joint:remove_noop_ops", "agrees")]),
                   "inductor", PipelineOptions(), lambda o: "agrees")
    assert (aot.stage, aot.moved_from, aot.own_off) == ("joint:remove_noop_ops", "aot", False)
    # the field and the trail's words say the same, so a repro renders alike either way
    for b in (moved, stands, aot):
        structured = _meta(b, structured=True)
        assert pass_off_move(structured, b.stage) == moved_by_pass_off(b.trail, b.stage)
        assert _docstring(b, structured=True) == _docstring(b)
    # the renderer takes the field, not the words: reworded, the trail moves nothing
    reworded = {**_meta(moved, structured=True), "trail": [list(t) for t in CUTS]}
    assert "by the pass-off control" in _docstring(moved, meta=reworded)
    not_moved = {**_meta(moved), "moved_by_pass_off": None}  # null: not moved, whatever it says
    assert "by the pass-off control" not in _docstring(moved, meta=not_moved)


def test_the_corpus_entry_of_a_moved_blame_records_the_move(tmp_path):
    from tests.unit.test_corpus_store import _program

    out = {"verdict": "miscompile", "check": "values", "explanation": "out0: values differ"}
    provenance = {"campaign": "c", "seed": 0, "program_index": 0, "device": "cpu"}
    for b in (_blamed("REMOVE_NOOP_OPS"), _blamed("REINPLACE_INPLACEABLE_OPS")):
        (path,) = record(tmp_path, _program(), _program(), out, "inductor",
                         {**b.to_json(), "full": None}, [], provenance).paths
        meta = json.loads((path / "meta.json").read_text())
        assert meta["moved_by_pass_off"] == b.to_json()["moved_by_pass_off"]
        load_entry(path)  # its type is checked on load
    meta["moved_by_pass_off"] = {"cut": "reinplace", "own_off": "yes"}
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InvalidArgument, match="moved_by_pass_off.own_off must be true or false"):
        load_entry(path)


#: The cut of audit 38's 0a4e0624e7: every stage up to the reinplace pass agrees, full
#: Inductor raises (``make_reindexer NYI on DtypeView``).
LOWERING = [("dynamo", "agrees"), ("aot", "agrees"), ("reinplace", "agrees"),
            ("lowering", "departs (raises NotImplementedError: make_reindexer NYI on DtypeView())")]


@pytest.mark.parametrize(("off", "pipeline", "component", "said"), [
    ("agrees", "inductor", None, "agrees"),
    ("raises", "inductor", None, None),  # lowering fails with the pass off too
    ("agrees", "inductor-noreinplace", None, None),  # the pass never ran
    # audit 51, ecaa4998b9: on CPU, with the pass off, the compile got past the scheduler's
    # KeyError to a user Triton kernel's codegen, a documented refusal: the error is gone
    ("unsupported:inductor-cpu-user-triton", "inductor", "scheduler", "gone"),
    # raised in codegen itself, the refusal may come first: nothing is shown
    ("unsupported:inductor-cpu-user-triton", "inductor", "codegen", None),
])
def test_a_lowering_failure_that_needs_the_reinplace_pass_says_so(off, pipeline, component, said):
    tried = []

    def runner(opts: PipelineOptions) -> str:
        tried.append(str(opts))
        return off if "REINPLACE_INPLACEABLE_OPS" in str(opts) else "raises"

    b = pass_off(Blame("lowering", ("lowering",), list(LOWERING), component=component), pipeline,
                 PipelineOptions(), runner)
    assert b.stage == "lowering" and b.stages == ("lowering",)  # the blame stands
    rows = [what for st, what in b.trail if st == ENABLED_BY]
    assert len(tried) == len(rows) == (0 if pipeline == "inductor-noreinplace" else 1)
    assert (rows[0].startswith("reinplace disabled: agrees") if said == "agrees" else
            rows[0].startswith(ERROR_GONE) if said == "gone" else
            not rows or rows[0].endswith("; the blame stands")), rows
    program, _, _ = CASES["ok-aot_eager"]
    meta = meta_v2(program, pipeline, "crash", "exceptions", "lowering",
                   explanation="compiled raises _Failed: compile: NotImplementedError: x")
    meta["trail"], meta["stages"] = [list(t) for t in b.trail], ["lowering"]
    text = " ".join(render_repro(program, meta).split('"""')[1].split())
    assert ("It needs Inductor's reinplace pass: with the pass disabled" in text) is bool(said), text
    assert ("the program compiles and agrees with eager" in text) is (said == "agrees"), text
    assert ("the error is gone, and the compile goes on until a documented refusal stops it "
            "(inductor-cpu-user-triton: Inductor's codegen of user Triton kernels needs a GPU)"
            in text) is (said == "gone"), text


@pytest.mark.parametrize(("agrees_without", "also"), [
    (("REINPLACE_INPLACEABLE_OPS", "REMOVE_NOOP_OPS"), True),  # both controls remove it
    (("REINPLACE_INPLACEABLE_OPS",), False),  # only the blamed pass's
])
def test_a_second_pass_whose_control_also_removes_the_finding_is_named(agrees_without, also):
    """Audit 38: disabling remove_noop_ops removed a reinplace finding too, and the entry
    named one control only. The blame stays on the pass the cut named."""
    tried = []

    def runner(opts: PipelineOptions) -> str:
        tried.append(str(opts))
        return "agrees" if any(n in str(opts) for n in agrees_without) else "departs"

    b = pass_off(Blame("reinplace", ("reinplace",), list(CUTS)), "inductor",
                 PipelineOptions(), runner)
    assert b.stage == "reinplace" and b.moved_from is None
    said = [what for st, what in b.trail if st == ALSO_FIXED_BY]
    assert len(said) == 1 and said[0].startswith("joint:remove_noop_ops disabled: "), b.trail
    assert ("both passes take part" in said[0]) is also
    assert len(tried) == 2
    text = _docstring(b)
    assert ("Disabling joint:remove_noop_ops removes it too (disabled_passes REMOVE_NOOP_OPS)"
            in text) is also, text
    assert "Blamed stage: reinplace" in text


def test_no_second_control_for_a_pass_that_did_not_change_the_graph():
    """A pass absent from the trail changed nothing (stages.py runs no equal snapshot):
    disabling it cannot matter, so no compile is spent on it."""
    tried = []

    def runner(opts: PipelineOptions) -> str:
        tried.append(str(opts))
        return "agrees"

    cuts = [c for c in CUTS if c[0] != "joint:remove_noop_ops"]
    b = pass_off(Blame("reinplace", ("reinplace",), cuts), "inductor", PipelineOptions(), runner)
    assert len(tried) == 1 and not any(st == ALSO_FIXED_BY for st, _ in b.trail), b.trail
