"""Known upstream bugs (corpus/known.toml): loading, validation, matching of root causes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign import known
from aliasfuzz.campaign.known import KnownBug, load_known, match
from aliasfuzz.errors import InvalidArgument

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
DATA = Path(__file__).resolve().parents[1] / "data" / "known"


def _root(stage: str, evidence: list[str], verdict: str = "miscompile") -> dict:
    return {"stage": stage, "verdict": verdict, "check": "values", "evidence": evidence}


def test_the_repository_table_loads_and_names_an_issue_per_bug():
    bugs = load_known(CORPUS)
    assert len(bugs) >= 5
    assert all("#" in b.issue and b.title for b in bugs)


def test_the_audited_roots_match_their_upstream_issues():
    bugs = load_known(CORPUS)
    dropout, _ = match(bugs, _root("decomposition", ["custom", "view"]), {"dropout_eval", "fz.halve_"}, {"aot_eager"})
    assert dropout is not None and dropout.issue.endswith("#195422")
    twice, _ = match(bugs, _root("functionalization", ["triton"]), {"tk.scale_then_shift"}, {"inductor"})
    assert twice is not None and twice.issue.endswith("#196657")
    # a crash of another check in a program that kept a kernel is not that lost write (tenth
    # audit 685598546a: functionalization's unfold internal-overlap refusal)
    crash, _ = match(bugs, _root("functionalization", ["triton", "view"], "crash"),
                     {"tk.sum_diff", "unfold"}, {"inductor"})
    assert crash is None or not crash.issue.endswith("#196657")
    # overlapping inputs through torch.func.functionalize: functorch#950, not the Triton bug
    fx, _ = match(bugs, _root("functionalization", ["triton", "aliased-inputs"]), {"tk.sum_diff"},
                  {"fx-reinplace"})
    assert fx is not None and fx.issue.endswith("functorch#950")
    # the same evidence through AOTAutograd is no known bug
    aot, _ = match(bugs, _root("functionalization", ["triton", "aliased-inputs"]), {"tk.sum_diff"},
                   {"aot_eager"})
    assert aot is None
    # a new root (remove_noop_ops returning one storage twice) matches nothing
    new, related = match(bugs, _root("joint:remove_noop_ops", ["functional"]), {"add.Scalar", "clone"},
                         {"inductor"})
    assert new is None and related == []


def test_related_bugs_are_shown_but_do_not_make_a_finding_known():
    bugs = load_known(CORPUS)
    # a scatter kept by the pass behind an index_put: the family, not the issue's program
    hit, related = match(bugs, _root("reinplace", ["scatter:missed"], "missed-reinplace"),
                         {"index_put_"}, {"inductor"})
    assert hit is None
    assert {b.issue for b in related} >= {"pytorch/pytorch#195285", "pytorch/pytorch#152346"}
    # x[a:b] += c itself is #152346 (fourteenth audit 8c9f0d424d)
    hit, related = match(bugs, _root("reinplace", ["scatter:missed"], "missed-reinplace"),
                         {"setitem_iadd.Scalar"}, {"inductor"})
    assert hit is not None and hit.issue == "pytorch/pytorch#152346" and not hit.related
    assert "pytorch/pytorch#195285" in {b.issue for b in related}
    # audit 26's 359e61eada: #195285 itself, and not again among the related, nor twice
    hit, related = match(bugs, _root("reinplace", ["scatter:missed"], "missed-reinplace"),
                         {"setitem_iadd.Scalar", "index_put_"}, {"inductor-reinplace"})
    issues = [b.issue for b in related]
    assert hit is not None and hit.issue == "pytorch/pytorch#195285"
    assert hit.issue not in issues and len(issues) == len(set(issues)) >= 1, issues


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[[bug]\nissue = 1", "not valid TOML"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"", "stage must be"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\nops = \"a\"", "ops must be a list"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\nbogus = 1", "unknown key"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\nwhy = 3", "why must be a non-empty string"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\nwhy = \" \"", "why must be a non-empty string"),
        ("bug = 3", "array of tables"),
        # the fresh user's silent mistakes: a misspelt table, stage or verdict never matched
        ("[[bugs]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"", "unknown table(s) ['bugs']"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"reinplacee\"", "unknown stage"),
        # fresh user 20: the hint named neither of this week's forms
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"reinplacee\"",
         "aot-runtime, or unblamed:<pipeline> with verdict = \"missed-reinplace\""),
        # fresh user 20: a misspelt witness rule was accepted and could never match
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"unblamed:inductor\"\n"
         "verdict = \"missed-reinplace\"\nevidence = [\"witness:no-such-rule\"]",
         "unknown witness rule(s) ['witness:no-such-rule'] in evidence (known rules: "
         "witness:augmented-setitem, witness:graph-split)"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"joint:remove_noop_ops\"\n"
         "verdict = \"miscompiel\"", "unknown verdict"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\ncontrol = 3",
         "control must be a table"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\nrelated = true\n"
         "control = { dynamic = true }", "not related = true"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\n"
         "control = { functorch = {} }", "unknown pipeline option(s) ['functorch']"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\ntorch = \"2.11\"",
         "torch must be PEP 440 version specifiers"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\ntorch = 2.11",
         "torch must be PEP 440 version specifiers"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\nexplanation = \"(a\"",
         "explanation must be a regular expression"),
        ("[[bug]]\nissue = \"x#1\"\ntitle = \"t\"\nstage = \"aot\"\nexplanation = 3",
         "explanation must be a regular expression"),
    ],
)
def test_a_malformed_table_is_a_one_line_error(tmp_path, text, needle):
    (tmp_path / "known.toml").write_text(text)
    with pytest.raises(InvalidArgument) as e:
        load_known(tmp_path)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_a_fresh_corpus_reads_the_checkouts_table(tmp_path):
    # a campaign into a new --corpus DIR still counts known bugs apart
    assert [b.issue for b in load_known(tmp_path)] == [b.issue for b in load_known(CORPUS)]


def test_no_table_anywhere_means_no_known_bugs(tmp_path, monkeypatch):
    monkeypatch.setattr(known, "DEFAULT", tmp_path / "absent.toml")
    assert load_known(tmp_path) == []


def test_variants_of_a_known_bug_are_hits_of_one_entry(tmp_path):
    from tests.unit.test_corpus_store import _program

    bug = KnownBug(issue="pytorch/pytorch#1", title="t", stage="decomposition", ops=("add_.Scalar",))
    out = {"verdict": "miscompile", "check": "values", "explanation": "x differs"}
    blame = {"stage": "decomposition", "stages": ["decomposition"]}

    def rec(program, check="values", bugs=(bug,)):
        return store.record(tmp_path, program, program, {**out, "check": check}, "aot_eager",
                            blame, list(bugs), {"campaign": "c", "program_index": 0, "seed": 0})

    a, b = rec(_program(2)), rec(_program(1), check="inputs")
    assert a.knowns == b.knowns == ("pytorch/pytorch#1",)
    assert a.paths == b.paths  # two programs, two checks: one entry
    # without the bug, programs whose features and ops are not comparable are two roots
    # (add_ then sin, and mul_ alone); add_ alone is the same bug as add_ then sin by
    # subsumption (aliasfuzz.campaign.rootclass), one more hit of its entry
    from aliasfuzz.fuzz.ir import Op

    p = _program(1)
    mul = type(p)(p.storages, p.inputs, (Op("mul_.Scalar", ("x",), {"other": 2.0}, ("v0",)),),
                  p.outputs)
    c, d = rec(_program(2), bugs=()), rec(mul, check="inputs", bugs=())
    assert len({a.paths, c.paths, d.paths}) == 3
    assert rec(_program(1), check="inputs", bugs=()).paths == c.paths


def test_a_second_root_of_a_known_finding_is_new_in_the_report(tmp_path):
    # a finding written under two roots (functionalization: known #196657; reinplace: new)
    # names the first known bug in its event; the report must read each entry's own meta
    from aliasfuzz.report.data import root_causes
    from tests.unit.test_corpus_store import _meta, _program

    p = _program()
    bug = {"issue": "pytorch/pytorch#196657", "title": "t", "related": False}
    a, _ = store.write_entry(tmp_path, p, {**_meta(p), "known": bug})
    b, _ = store.write_entry(tmp_path, _program(1), {**_meta(_program(1)), "known": None})
    event = {"t": "finding", "id": a.name, "ids": [a.name, b.name], "pipeline": "inductor",
             "verdict": "miscompile", "check": "values", "known": bug["issue"]}
    status = {r["id"]: (r["status"], r["known_issue"]) for r in root_causes(tmp_path, [event], set())}
    assert status == {a.name: ("known", bug["issue"]), b.name: ("new", None)}


#: a finding blamed on two stages, of which only decomposition is a known bug's
TWO_STAGES = {"stage": "functionalization", "stages": ["functionalization", "decomposition"]}
ADD_BUG = KnownBug(issue="pytorch/pytorch#196657", title="t", stage="decomposition",
                   ops=("add_.Scalar",))


def test_each_root_of_a_finding_records_its_own_known_bug(tmp_path):
    # a fresh user saw "known #196657" on the line of an entry whose meta.json says
    # "known": null: record() returned one known, the first among the finding's roots
    import json

    from tests.unit.test_corpus_store import _program

    out = {"verdict": "miscompile", "check": "values", "explanation": "x differs"}
    rec = store.record(tmp_path, _program(), _program(), out, "aot_eager", TWO_STAGES,
                       [ADD_BUG], {"campaign": "c", "program_index": 0, "seed": 0})
    assert [p.name.split("-")[1] for p in rec.paths] == ["functionalization", "decomposition"]
    assert rec.knowns == (None, ADD_BUG.issue)
    metas = [json.loads((p / "meta.json").read_text()) for p in rec.paths]
    assert [(m["known"] or {}).get("issue") for m in metas] == list(rec.knowns)


def test_an_unreadable_entry_of_a_finding_takes_its_own_known_from_the_journal(tmp_path):
    # the report reads an entry's meta.json; for one it cannot read, only that entry's
    # own known from the event, never its sibling's (nor an old event's one known of all)
    from aliasfuzz.report.data import root_causes
    from tests.unit.test_corpus_store import _meta, _program

    bug = {"issue": ADD_BUG.issue, "title": "t", "related": False}
    a, _ = store.write_entry(tmp_path, _program(), {**_meta(_program()), "known": bug})
    gone = "miscompile-reinplace-0000000000"
    head = {"t": "finding", "id": a.name, "ids": [a.name, gone], "pipeline": "inductor",
            "verdict": "miscompile", "check": "values"}
    new = {**head, "news": [True, True], "knowns": [bug["issue"], None], "new": True}
    old = {**head, "new": True, "known": bug["issue"]}  # journaled before knowns existed
    for event in (new, old):
        rows = {r["id"]: r for r in root_causes(tmp_path, [event], set())}
        assert (rows[a.name]["status"], rows[a.name]["known_issue"]) == ("known", bug["issue"])
        assert "error" in rows[gone]
        assert (rows[gone]["status"], rows[gone]["known_issue"]) == ("new", None), event
    # summary.json's findings: each entry's own; an old event's new decided by the corpus
    # at the start, its one known given to no entry of two
    from aliasfuzz.report.data import _finding_row

    assert _finding_row(new, set())["knowns"] == [bug["issue"], None]
    assert _finding_row(old, {gone}) == {
        **{k: head[k] for k in ("id", "ids", "pipeline", "verdict", "check")},
        "i": None, "stage": None, "stages": None, "full": None,
        "news": [True, False], "knowns": [None, None], "new": True}


def test_an_index_put_written_into_an_input_is_not_filed_as_the_values_alias_bug():
    # seventh audit 786d60d89a: its unsafe decision is an index_put under rule 5 (a fresh
    # output written into an input's storage), #198094's family, while #156786 is the
    # index_put that reads its own written buffer (rule 1)
    bugs = load_known(CORPUS)
    hit, related = match(bugs, _root("reinplace", ["index_put:rule 5"]), {"index_add.out"},
                         {"inductor"})
    assert hit is None
    assert [b.issue for b in related] == ["pytorch/pytorch#198094"]
    hit, _ = match(bugs, _root("reinplace", ["index_put:rule 1"]), {"index_copy"}, {"inductor"})
    assert hit is not None and hit.issue.endswith("#156786")


def test_an_in_place_view_through_a_no_op_alias_of_the_input_is_the_dynamo_guard_bug():
    # x.contiguous().unsqueeze_(2) of a contiguous input, blamed on dynamo (checked with
    # blame_program on torch 2.13 CPU): PyTorch #198100, for unsqueeze_ and squeeze_ alike
    bugs = load_known(CORPUS)
    for op in ("unsqueeze_", "squeeze_"):
        bug, _ = match(bugs, _root("dynamo", ["view"], "crash"), {"contiguous", op}, {"aot_eager"})
        assert bug is not None and bug.issue.endswith("#198100"), op
    # the in-place view alone (a graph break Dynamo handles) is not that bug
    alone, _ = match(bugs, _root("dynamo", ["view"], "crash"), {"unsqueeze_"}, {"aot_eager"})
    assert alone is None
    # nor a miscompile of the same ops
    wrong, _ = match(bugs, _root("dynamo", ["view"]), {"contiguous", "unsqueeze_"}, {"aot_eager"})
    assert wrong is None


def test_a_wrong_value_view_of_an_aliased_input_is_the_synthetic_base_bug():
    # ninth campaign 15b880eb65 (fifth auditor: a duplicate of #198095, filed new because
    # the table matched the crash variant only)
    bugs = load_known(CORPUS)
    ev = ["inplace", "view", "aliased-inputs", "strided-inputs"]
    # blamed on AOTAutograd's runtime wrappers (the functional graph's own outputs agree) and
    # known once the issue's workaround gives eager's values; related only until it ran
    for pipeline in ("aot_eager", "inductor", "inductor-reinplace"):
        issue = "pytorch/pytorch#198095"
        bug, _ = match(bugs, _root("aot-runtime", ev), {"add_.Scalar", "narrow"}, {pipeline},
                       {issue: "ok"})
        assert bug is not None and bug.issue == issue and not bug.related, pipeline
        assert bug.verdict == "miscompile"
        bug, related = match(bugs, _root("aot-runtime", ev), {"add_.Scalar", "narrow"}, {pipeline})
        assert bug is None and any(b.issue == issue for b in related), pipeline
    # a functional graph that itself computes other values is not the wrappers' bug
    graph, _ = match(bugs, _root("functionalization", ev), {"add_.Scalar", "narrow"},
                     {"aot_eager"}, {"pytorch/pytorch#198095": "ok"})
    assert graph is None or not graph.issue.endswith("#198095")
    # through torch.func.functionalize it is functorch#950, not this
    fx, _ = match(bugs, _root("functionalization", ev), {"add_.Scalar", "narrow"}, {"fx-reinplace"})
    assert fx is not None and fx.issue.endswith("functorch#950")
    # the crash variant (raised by AOTAutograd's runtime wrappers) stays related only until
    # its control runs; a crash while functionalization traces is not that bug
    crash, related = match(bugs, _root("aot-runtime", ev, "crash"), {"narrow"}, {"aot_eager"})
    assert crash is None and any(b.issue.endswith("#198095") for b in related)
    traced, related = match(bugs, _root("functionalization", ev, "crash"), {"narrow"}, {"aot_eager"})
    assert traced is None and not any(b.issue.endswith("#198095") for b in related)


def test_an_in_place_op_through_a_gapped_unfold_is_the_unfold_inverse_bug():
    # eleventh audit wave B, c4ca8b0e6d: x.unfold(0, 2, 2).add_(1) zeroes the element no
    # window covers (open fix pytorch#198105); filed new before this row
    bugs = load_known(CORPUS)
    bug, _ = match(bugs, _root("functionalization", ["inplace", "view"]),
                   {"add_.Scalar", "unfold"}, {"aot_eager", "inductor"})
    assert bug is not None and bug.issue.endswith("#198102") and not bug.related
    # without unfold, or with aliased inputs (#198095 / functorch#950), it is not this bug
    other, _ = match(bugs, _root("functionalization", ["inplace", "view"]), {"add_.Scalar"},
                     {"aot_eager"})
    assert other is None
    aliased, _ = match(bugs, _root("functionalization", ["inplace", "view", "aliased-inputs"]),
                       {"add_.Scalar", "unfold"}, {"aot_eager"})
    assert aliased is None or not aliased.issue.endswith("#198102")


def test_a_bug_with_a_control_is_known_only_when_its_workaround_removes_the_finding():
    # #198095's crash form (AOTAutograd's runtime wrappers): the fields alone match other crashes of
    # programs with aliased inputs; view_replay_for_aliased_outputs=False removes only its own
    bugs = load_known(CORPUS)
    (bug,) = [b for b in bugs if b.control and b.verdict == "crash" and b.stage == "aot-runtime"]
    assert bug.issue.endswith("#198095")
    root = _root("aot-runtime", ["inplace", "view", "aliased-inputs"], "crash")
    ops = {"add_.Scalar", "reshape"}
    hit, related = match(bugs, root, ops, {"aot_eager"}, {bug.issue: "ok"})
    assert hit == bug
    # a control that ran the compiled call with only a kept-copy claim undecided removed the
    # crash too (the fourteenth session's fresh user: "unknown" on Inductor filed it new)
    for gone in ("unknown", "missed-reinplace"):
        assert match(bugs, root, ops, {"inductor"}, {bug.issue: gone})[0] == bug, gone
    for controls in (None, {}, {bug.issue: "crash"}, {bug.issue: "internal-error"},
                     {bug.issue: "miscompile"}, {bug.issue: "unsupported"}):
        hit, related = match(bugs, root, ops, {"aot_eager"}, controls)
        assert hit is None and bug in related, controls
    # the campaign runs the control only where the fields match
    assert known.control_candidates(bugs, [root], ops, "aot_eager") == [bug]
    # a crash of the wrappers with no view in the program, or one while functionalization
    # traces, does not run it
    assert known.control_candidates(bugs, [_root("aot-runtime", ["inplace", "out"], "crash")],
                                    ops, "aot_eager") == []
    assert known.control_candidates(bugs, [_root("functionalization", ["inplace", "view"], "crash")],
                                    ops, "aot_eager") == []
    # twelfth audit wave B, be7747f2ef: the input is written by a custom op, not an aten
    # in-place op; the workaround removed the crash, so it is this bug
    custom = _root("aot-runtime", ["custom", "view", "aliased-inputs", "strided-inputs"], "crash")
    assert known.control_candidates(bugs, [custom], {"fz.bump_pair", "diagonal"}, "aot_eager") == [bug]
    assert match(bugs, custom, {"fz.bump_pair", "diagonal"}, {"aot_eager"}, {bug.issue: "ok"})[0] == bug
    # the control's options go on top of the finding's, config tables merged
    assert bug.control_options({"inductor_config": {"x": 1}, "functorch_config": {"y": 2}}) == {
        "inductor_config": {"x": 1},
        "functorch_config": {"y": 2, "view_replay_for_aliased_outputs": False}}


def test_only_ok_removes_a_value_finding_under_its_control():
    assert known.control_removes("miscompile", "ok")
    assert not known.control_removes("miscompile", "unknown")
    assert not known.control_removes("miscompile", "missed-reinplace")
    assert known.control_removes("timeout", "unknown")
    assert not known.control_removes("crash", None)


#: audit 36's crash-dynamo-0dd604e24c (#122773 on the fast path, dynamic shapes) and its
#: control (static shapes), as the worker explained them (torch 2.13)
_TRACE = {"verdict": "crash", "check": "exceptions", "explanation": "compiled raises _Failed: "
          "trace: TorchRuntimeError: RuntimeError when making fake tensor call; eager does not"}
_RUN = {"verdict": "crash", "check": "exceptions", "explanation": "compiled raises _Failed: run: "
        "RuntimeError: unsupported operation: some elements of the input tensor and the "
        "written-to tensor refer to a single memory location. Please clone() the tensor "
        "before performing the operation.; eager does not"}


def test_a_crash_is_removed_when_its_control_gets_past_it_to_another_error_or_returns():
    assert known.control_removes("crash", "crash", _TRACE, _RUN)  # later stage, another error
    assert known.control_removes("crash", "miscompile", _TRACE, {"verdict": "miscompile"})
    # the same error, or another one no later than the finding's, may hide the finding's
    assert not known.control_removes("crash", "crash", _TRACE, dict(_TRACE))
    assert not known.control_removes("crash", "crash", _RUN, _TRACE)
    same_stage = {**_RUN, "explanation": _RUN["explanation"].replace("run:", "trace:")}
    assert not known.control_removes("crash", "crash", _TRACE, same_stage)
    # no stage to read (a reworded explanation), verdicts alone, or a value finding: as before
    assert not known.control_removes("crash", "crash", _TRACE, {**_RUN, "explanation": "boom"})
    assert not known.control_removes("crash", "crash")
    assert not known.control_removes("crash", "miscompile")
    assert not known.control_removes("miscompile", "crash", {"verdict": "miscompile"}, _RUN)
    # match reads the blame's controls_removed where the campaign judged both outcomes
    bugs = load_known(CORPUS)
    (bug,) = [b for b in bugs if b.control and b.stage == "dynamo" and not b.ops]
    root = _root("dynamo", ["inplace", "out"], "crash")
    ops = {"index_reduce.out"}
    said = _TRACE["explanation"]
    assert match(bugs, root, ops, {"inductor-reinplace"}, {bug.issue: "crash"},
                 explanation=said)[0] is None
    assert match(bugs, root, ops, {"inductor-reinplace"}, {bug.issue: "crash"},
                 {bug.issue: True}, explanation=said)[0] == bug


def test_the_option_fields_a_control_may_set_are_the_pipeline_options():
    import dataclasses

    from aliasfuzz.passes.pipelines import PipelineOptions

    assert known._OPTION_FIELDS == {f.name for f in dataclasses.fields(PipelineOptions)}


def test_a_write_through_an_as_strided_view_after_an_in_place_op_is_the_strides_bug():
    # twelfth audit wave G, 478bd290bd: as_strided view of a transposed input, scatter_ on
    # the input, add_ through the view: the view is regenerated on scatter's layout
    bugs = load_known(CORPUS)
    root = _root("functionalization", ["inplace", "view", "strided-inputs"])
    bug, _ = match(bugs, root, {"add_.Scalar", "as_strided", "scatter_.value"}, {"aot_eager"})
    assert bug is not None and bug.issue.endswith("#133512") and not bug.related
    # a functionalization miscompile without as_strided is not this row
    other, _ = match(bugs, root, {"add_.Scalar", "narrow", "scatter_.value"}, {"aot_eager"})
    assert other is None or not other.issue.endswith("#133512")


def test_a_stride_sensitive_read_after_an_in_place_op_is_the_strides_bug():
    # eleventh audit wave F, 4f56f2c831 (as_strided_scatter), and shared case c01
    # (as_strided_copy, the issue's own repro): pytorch#133512
    bugs = load_known(CORPUS)
    for op in ("as_strided_scatter", "as_strided_copy"):
        bug, _ = match(bugs, _root("functionalization", ["inplace", "view"]),
                       {"cumsum_", "permute", op}, {"aot_eager"})
        assert bug is not None and bug.issue.endswith("#133512"), op
    # without an in-place op it is not that bug
    none, _ = match(bugs, _root("functionalization", ["view"]), {"as_strided_copy"}, {"aot_eager"})
    assert none is None


def test_a_slice_update_then_index_put_temporary_is_the_generalized_scatter_bug():
    # audit 22, 28782ce57a: x[1:-1] += 1; x.index_put_(...) keeps a full-size temporary; the
    # tool had named #152346 (the += spelling), whose program alone costs only the slice
    bugs = load_known(CORPUS)
    root = _root("reinplace", ["scatter:missed"], "missed-reinplace")
    bug, _ = match(bugs, root, {"setitem_iadd.Scalar", "index_put_"}, {"inductor-reinplace"})
    assert bug is not None and bug.issue.endswith("#195285"), bug
    bug, _ = match(bugs, root, {"slice", "add_.Scalar", "index_put_"}, {"inductor-reinplace"})
    assert bug is not None and bug.issue.endswith("#195285"), bug
    alone, _ = match(bugs, root, {"setitem_iadd.Scalar"}, {"inductor-reinplace"})
    assert alone is not None and alone.issue.endswith("#152346")


def test_a_clone_dropped_before_a_custom_op_reinplaced_into_its_input_is_the_noop_clone_bug():
    # audit 23, 2be6c01096: c = x.clone(); op(c, x) compiles to op(x, x) (seed b01's own
    # program, pytorch#198031); the tool had shown the issue as related only
    from aliasfuzz.fuzz.ir import Program

    bugs = load_known(CORPUS)
    own = Program.from_json(json.loads((DATA / "rotate_left_into_clone.json").read_text()))
    root = _root("reinplace", ["auto_functionalized_v2:reinplaced"], "miscompile")
    bug, _ = match(bugs, root, {"clone", "fz.rotate_left_into"}, {"inductor"}, program=own)
    assert bug is not None and bug.issue.endswith("#198031") and not bug.related, bug
    # the same family with another verdict is still only related
    cost = _root("reinplace", ["auto_functionalized_v2:reinplaced"], "missed-reinplace")
    none, related = match(bugs, cost, {"clone", "fz.rotate_left_into"}, {"inductor"}, program=own)
    assert none is None and any(b.issue.endswith("#198031") for b in related)


def test_a_clone_no_custom_op_reads_is_not_the_noop_clone_bug():
    # audit 53, 7ab134e145's program 308: v1 = x0.clone(); add_one_(x0); index_add(x0, 0, i,
    # v1, out=x0.slice_scatter(x0)) writes x0 compiled (remove_noop_ops drops the full-range
    # slice_scatter); it was filed under #198031 by its ops and decisions, and no op reads a
    # clone of what it writes there. It is shown as related, and is new
    from aliasfuzz.fuzz.ir import Program

    bugs = load_known(CORPUS)
    p308 = Program.from_json(json.loads((DATA / "index_add_through_noop_slice_scatter.json").read_text()))
    root = _root("reinplace", ["auto_functionalized_v2:reinplaced"], "miscompile")
    ops = {op.op for op in p308.body}
    bug, related = match(bugs, root, ops, {"inductor"}, program=p308)
    assert bug is None and [b.issue for b in related] == ["pytorch/pytorch#198031"], (bug, related)
    assert not known.PATTERNS["custom-op-reads-clone-of-written"](p308)
    # without the program a row with a pattern cannot be told: not the bug
    assert match(bugs, root, {"clone", "fz.rotate_left_into"}, {"inductor"})[0] is None


def test_an_unknown_pattern_is_a_one_line_error(tmp_path):
    (tmp_path / "known.toml").write_text('[[bug]]\nissue = "a/b#1"\ntitle = "t"\n'
                                         'stage = "reinplace"\npattern = "no-such-shape"\n')
    with pytest.raises(InvalidArgument, match="unknown pattern 'no-such-shape'"):
        load_known(tmp_path)


def test_contiguous_after_an_in_place_op_on_a_strided_input_is_the_strides_bug():
    # audit 22, 7b3b3d63ca: x.add_(1); x.contiguous().add_(1) on a (7, 1)-strided input,
    # fx-reinplace's functionalize (the tool had filed it as new)
    bugs = load_known(CORPUS)
    root = _root("functionalization", ["functional", "inplace", "strided-inputs"])
    bug, _ = match(bugs, root, {"add_.Scalar", "contiguous"}, {"fx-reinplace"})
    assert bug is not None and bug.issue.endswith("#133512") and not bug.related
    none, _ = match(bugs, _root("functionalization", ["functional"]), {"contiguous"},
                    {"fx-reinplace"})
    assert none is None


@pytest.mark.parametrize(("release", "known_here"), [("2.11.0", True), ("2.12.1", True), ("2.13.0", False)])
def test_a_bug_of_older_releases_is_known_only_on_them(monkeypatch, release, known_here):
    # PyTorch #148952: index_fill_'s decomposition mutates below functionalization on torch
    # 2.11 (the H200's release); 2.13 fixed it, so there the same root would be a new bug
    monkeypatch.setattr(known, "torch_release", lambda: release)
    root = {"stage": "functionalization", "verdict": "crash", "evidence": []}
    hit, _ = match(load_known(CORPUS), root, {"index_fill_"}, {"inductor"})
    assert (hit is not None and hit.issue == "pytorch/pytorch#148952") is known_here, hit
    other, _ = match(load_known(CORPUS), root, {"index_put_"}, {"inductor"})
    assert other is None or other.issue != "pytorch/pytorch#148952"


def test_the_release_ignores_local_build_tags(monkeypatch):
    import torch

    monkeypatch.setattr(torch, "__version__", "2.11.0+cu130")
    assert known.torch_release() == "2.11.0"


def test_a_root_shows_this_campaigns_full_compile_verdict(tmp_path):
    # a fresh user: the terminal said full:reproduces, the report's row the entry's own n/a
    from aliasfuzz.report.data import root_causes
    from tests.unit.test_corpus_store import _meta, _program

    p = _program()
    a, _ = store.write_entry(tmp_path, p, {**_meta(p), "full": None})
    seen = {"t": "finding", "id": a.name, "pipeline": "inductor-reinplace", "verdict": "miscompile",
            "check": "values", "full": "reproduces"}
    other = {**seen, "pipeline": "aot_eager", "full": None}
    (row,) = root_causes(tmp_path, [seen, other], set())
    assert row["full"] == "reproduces"
    (row,) = root_causes(tmp_path, [other], set())
    assert row["full"] is None  # no fast-path sighting: the entry's own (the template's n/a)


def test_a_roots_check_is_the_one_its_explanation_shows(tmp_path):
    # fresh user 38's B3: a row read "miscompile / inputs" (this campaign's sighting) above
    # the entry's own output-values explanation and diff
    from aliasfuzz.report.data import root_causes
    from tests.unit.test_corpus_store import _meta, _program

    p = _program()
    a, _ = store.write_entry(tmp_path, p, _meta(p))  # expected check: values
    seen = {"t": "finding", "id": a.name, "pipeline": "fx-reinplace", "verdict": "miscompile",
            "check": "inputs"}
    (row,) = root_causes(tmp_path, [seen], set())
    assert (row["check"], row["campaign_checks"]) == ("values", ["inputs"])
    (row,) = root_causes(tmp_path, [{**seen, "check": "values"}], set())
    assert (row["check"], row["campaign_checks"]) == ("values", [])


def test_a_cost_finding_of_a_known_spelling_is_known(tmp_path):
    # eighteenth hand check 9d43c7c8e7: x0[2:, ...] += 0.0 has the witness
    # x0[2:, ...].add_(0.0); its root names no stage (a cost finding) and was filed new
    bugs = load_known(CORPUS)
    root = {"stage": "unblamed:inductor", "verdict": "missed-reinplace", "check": "witness",
            "evidence": ["functional", "inplace", "witness:augmented-setitem"]}
    bug, _ = match(bugs, root, {"clone", "setitem_iadd.Scalar"}, {"inductor"})
    assert bug is not None and bug.issue == "pytorch/pytorch#152346" and not bug.related
    # another spelling rule, or the rule without the augmented assignment, is not this bug
    other = {**root, "evidence": ["functional", "inplace", "witness:graph-split"]}
    assert match(bugs, other, {"clone", "setitem_iadd.Scalar"}, {"inductor"})[0] is None
    assert match(bugs, root, {"clone", "index_put_"}, {"inductor"})[0] is None
    # a stage-less row is refused for any other verdict (saying which it needs), and for an
    # unknown pipeline
    for bad, needle in (('stage = "unblamed:inductor"\nverdict = "miscompile"',
                         'needs verdict = "missed-reinplace"'),
                        ('stage = "unblamed:inductor"', 'needs verdict = "missed-reinplace"'),
                        ('stage = "unblamed:nope"\nverdict = "missed-reinplace"', "unknown stage")):
        (tmp_path / "known.toml").write_text(f'[[bug]]\nissue = "x#1"\ntitle = "t"\n{bad}\n')
        with pytest.raises(InvalidArgument, match=needle):
            load_known(tmp_path)


def test_a_no_op_cat_of_an_offset_input_read_through_as_strided_is_the_noop_offset_bug():
    # audit 25, 10d3ae1e72: as_strided_copy(torch.cat([x]), (), (), 0) with x at storage
    # offset 10: remove_noop_ops dropped the cat (same_meta never compares storage offsets);
    # the tool had filed it as new beside #197489's clone spelling
    bugs = load_known(CORPUS)
    root = _root("joint:remove_noop_ops", ["functional", "strided-inputs"])
    bug, _ = match(bugs, root, {"as_strided_copy", "cat"}, {"inductor"})
    assert bug is not None and bug.issue.endswith("#197489") and not bug.related, bug
    # without an input layout to lose, a remove_noop_ops miscompile is not that bug
    none, _ = match(bugs, _root("joint:remove_noop_ops", ["functional"]), {"as_strided_copy", "cat"},
                    {"inductor"})
    assert none is None
    # nor is the corpus' other remove_noop_ops root, whose strided input plays no part
    other = store.load_entry(CORPUS / "miscompile-joint-remove-noop-ops-120937cd64").meta
    none, _ = match(bugs, other["root"], set(other["ops"]), {"inductor"})
    assert none is None


def test_a_clone_of_an_offset_input_a_custom_op_writes_is_the_noop_offset_bug():
    # audit 34, 4aa908be16: v = x.clone(); halve_(v); return v with x at storage offset 1:
    # remove_noop_ops dropped the clone and the values were read from offset 0 (#197489's
    # root; the audit found it filed as new)
    bugs = load_known(CORPUS)
    root = {"check": "values", "evidence": ["custom", "functional", "strided-inputs"],
            "stage": "joint:remove_noop_ops", "verdict": "miscompile"}
    bug, _ = match(bugs, root, {"clone", "fz.halve_", "matmul"}, {"inductor-reinplace"})
    assert bug is not None and bug.issue.endswith("#197489") and not bug.related, bug
    # without the custom op it is not that row's: the corpus' other remove_noop_ops root
    # (a fresh zeros written through by a foreach) stays its own
    other = store.load_entry(CORPUS / "miscompile-joint-remove-noop-ops-120937cd64").meta
    assert match(bugs, other["root"], set(other["ops"]), {"inductor"})[0] is None
    plain = {**root, "evidence": ["functional", "strided-inputs"]}
    assert match(bugs, plain, {"clone", "fz.halve_"}, {"inductor"})[0] is None


def test_the_failure_stage_is_read_from_the_outcome_field_before_the_explanation():
    # the worker's outcome names the stage (campaign/_judge.py); a reworded explanation
    # no longer hides it
    trace = {**_TRACE, "failed_at": "trace", "explanation": "raised something"}
    run = {**_RUN, "failed_at": "run", "explanation": "RuntimeError: overlap"}
    assert known._failed_at(trace) == 0 and known._failed_at(run) == 2
    assert not known.control_removes("crash", "crash", trace, run)  # no error class to read
    run = {**_RUN, "failed_at": "run"}
    assert known.control_removes("crash", "crash", {**_TRACE, "failed_at": "trace"}, run)
    # the field wins over the text: the same stage is not later
    assert not known.control_removes("crash", "crash", _TRACE, {**_RUN, "failed_at": "trace"})
    assert known._failed_at({"explanation": "boom", "failed_at": None}) is None


@pytest.mark.parametrize("entry", ["crash-lowering-baa68a8925", "crash-aot-runtime-4c99eb0bc2"])
def test_a_crash_outcome_carries_the_stage_its_explanation_names(entry):
    from aliasfuzz.campaign._judge import evaluate
    from aliasfuzz.fuzz.ir import Program

    meta = json.loads((CORPUS / entry / "meta.json").read_text())
    program = Program.loads((CORPUS / entry / "program.json").read_text())
    pipeline = meta["hits"][0]["pipeline"]
    out = evaluate(program, pipeline, "cpu", meta.get("pipeline_options") or None)
    assert out["verdict"] == "crash", out["explanation"]
    said = re.search(r"_Failed: (\w+): ", out["explanation"]).group(1)
    assert out["failed_at"] == said


def test_an_unsafe_custom_op_decision_beside_a_clone_is_not_the_noop_clone_bug():
    # audit 38, 7ab134e145: bump_pair(x0, x1); return x0.clone() compiles to an output that
    # aliases x0 (ground truth rule 5: #198094's family). The program kept a clone, so the
    # #198031 row (a decision the ground truth calls safe, the clone dropped after it) took
    # it, and its repro showed #198031's program instead of the entry's own
    bugs = load_known(CORPUS)
    root = {**_root("reinplace", ["auto_functionalized_v2:rule 5"]), "check": "aliasing"}
    bug, related = match(bugs, root, {"clone", "fz.bump_pair"}, {"inductor"})
    assert bug is None, bug
    # nor its family (audit 52, 1271c875dc: rule 2, two disjoint arguments, was shown beside
    # #198031, whose op reads the storage it writes: an engineer sent to the wrong fix)
    assert not any(b.issue.endswith("#198031") for b in related), related
    rule2 = {**_root("reinplace", ["auto_functionalized_v2:rule 2"]), "check": "values"}
    assert match(bugs, rule2, {"clone", "copy_", "fz.bump_pair"}, {"inductor"}) == (None, [])


def test_the_unsafe_custom_op_finding_joins_the_rule_5_entry_of_the_corpus(tmp_path):
    # the same finding recorded against the checkout's list: one more sighting of
    # e65ce44d27 (a fresh output written into an input by a custom op's reinplacing)
    import shutil

    from aliasfuzz.fuzz.ir import Program

    shutil.copytree(CORPUS / "miscompile-reinplace-e65ce44d27",
                    tmp_path / "miscompile-reinplace-e65ce44d27")
    program = Program.from_json(json.loads((DATA / "bump_pair_clone_returned.json").read_text()))
    out = {"verdict": "miscompile", "check": "aliasing",
           "explanation": "out0 is fresh in eager but aliases x0 compiled",
           "decisions": [{"kind": "auto_functionalized_v2", "reinplaced": True,
                          "truth": "unsafe", "rule": 5}]}
    blame = {"stage": "reinplace", "stages": ["reinplace"]}
    rec = store.record(tmp_path, program, program, out, "inductor-reinplace", blame,
                       load_known(CORPUS), {"campaign": "t", "seed": 38, "program_index": 17})
    assert [p.name for p in rec.paths] == ["miscompile-reinplace-e65ce44d27"]
    assert rec.knowns == (None,)


def test_198095_s_value_form_reached_through_a_graph_break_is_matched_by_its_control():
    # audit 40, 761a24f5b4: one strided input; add(v0, v0, out=v0) on its non-contiguous view
    # breaks the graph, which hands the next graph the input and the view (a synthetic base);
    # the workaround gives eager's values, yet the row's "aliased-inputs" filed it new
    bugs = load_known(CORPUS)
    (bug,) = [b for b in bugs if b.control and b.verdict == "miscompile" and b.stage == "aot-runtime"]
    assert bug.issue.endswith("#198095")
    root = _root("aot-runtime", ["inplace", "out", "view", "strided-inputs"])
    ops = {"add.out", "add_.Scalar", "narrow", "select", "view"}
    assert known.control_candidates(bugs, [root], ops, "aot_eager") == [bug]
    assert match(bugs, root, ops, {"aot_eager"}, {bug.issue: "ok"})[0] == bug
    hit, related = match(bugs, root, ops, {"aot_eager"}, {bug.issue: "miscompile"})
    assert hit is None and bug in related


def test_a_user_kernel_on_a_strided_input_written_in_place_is_the_strides_bug():
    # audit 41: 131777b1fe (and 7d0c3031ea, whose cut died) were filed new; the kernel
    # writes x1 through its (9, 2) strides into the contiguous functional result of fill_
    bugs = load_known(CORPUS)
    root = _root("functionalization", ["custom", "factory", "functional", "inplace", "scatter",
                                       "triton", "view", "aliased-inputs", "strided-inputs"])
    hit, _ = match(bugs, root, {"fill_", "tk.transpose_copy", "fz.bump_pair"}, {"inductor-reinplace"})
    assert hit is not None and hit.issue.endswith("#133512"), hit
    dense, _ = match(bugs, _root("functionalization", ["functional", "inplace", "triton"]),
                     {"add_.Scalar", "tk.transpose_copy"}, {"aot_eager"})
    assert dense is not None and dense.issue.endswith("#196657"), dense


def test_a_departure_of_joint_constant_folding_is_the_no_op_alias_bug():
    # audit 43: 98e128b7e3 (add(zeros, x) folded to x, returned as the input itself) untagged
    bugs = load_known(CORPUS)
    root = _root("joint:constant_fold_uniform_value", ["custom", "functional", "inplace", "out", "scatter", "view"])
    hit, _ = match(bugs, root, {"add.out", "fz.scaled", "neg", "set_.storage", "slice_scatter", "zero_"}, {"inductor"})
    assert hit is not None and hit.issue.endswith("#197893"), hit


def test_an_index_put_reinplaced_into_an_overwritten_input_shows_the_scatter_family():
    # audit 44: fa68412d58 (index_put:rule 3) named no issue; its auditor: #198094's bug
    bugs = load_known(CORPUS)
    hit, related = match(bugs, _root("reinplace", ["index_put:rule 3"]),
                         {"clone", "fz.bump_pair", "index_fill_", "mul.out"}, {"inductor-reinplace"})
    assert hit is None and [b.issue for b in related] == ["pytorch/pytorch#198094"], (hit, related)


def test_a_custom_op_writing_at_offset_zero_under_dynamic_shapes_is_the_sym_storage_offset_bug():
    # audit 45, b2717ee500 (once filed as an out-of-bounds view): known only when static
    # shapes, the issue's condition, give eager's values
    bugs = load_known(CORPUS)
    root = _root("lowering", ["custom", "view", "strided-inputs"])
    ops = {"fz.add_one_", "select"}
    (bug,) = [b for b in known.control_candidates(bugs, [root], ops, "inductor")
              if b.issue.endswith("#198068")]
    assert match(bugs, root, ops, {"inductor"}, {bug.issue: "ok"})[0] == bug
    hit, related = match(bugs, root, ops, {"inductor"}, {bug.issue: "miscompile"})
    assert hit is None and bug in related


def test_a_scatter_out_variant_under_dynamic_shapes_is_the_scatter_issue_not_gather_s():
    # audit 46, 20e6e2b026: scatter_add(..., out=) under dynamic shapes was filed as #122773
    # (torch.gather's); #194103 is the scatter out variants' own issue
    bugs = load_known(CORPUS)
    root = _root("dynamo", ["out", "functional"], "crash")
    for op, issue in (("scatter_add.out", "#194103"), ("scatter.out", "#194103"),
                      ("gather.out", "#122773")):
        hit, _ = match(bugs, root, {"clone", op}, {"inductor-reinplace"},
                       {"pytorch/pytorch#194103": "ok", "pytorch/pytorch#122773": "ok"},
                       explanation=_TRACE["explanation"])
        assert hit is not None and hit.issue.endswith(issue), (op, hit)


def test_a_root_of_another_observable_than_the_bugs_is_related_not_that_bug():
    # audit 47, 0e1bb94e80: an output that lost its aliasing after set_ matched #133512's
    # contiguous row (stage, verdict, op, evidence), whose symptom is values and inputs
    bugs = load_known(CORPUS)
    root = {"stage": "functionalization", "verdict": "miscompile", "check": "aliasing",
            "evidence": ["inplace", "view"]}
    ops = {"add_.Scalar", "contiguous", "fz.halve_", "select", "set_"}
    hit, related = match(bugs, root, ops, {"inductor-reinplace"})
    assert hit is None and "pytorch/pytorch#133512" in [b.issue for b in related]
    # a wrong element, in an output or an input, is the row's symptom
    for check in ("values", "inputs"):
        hit, _ = match(bugs, {**root, "check": check}, ops, {"inductor-reinplace"})
        assert hit is not None and hit.issue == "pytorch/pytorch#133512", check


def test_a_dtype_view_that_lowering_cannot_reindex_is_168995():
    # audit 47, f32ddc98cf: filed new; #168995 is open (make_reindexer NYI on DtypeView)
    bugs = load_known(CORPUS)
    root = {"stage": "lowering", "verdict": "crash", "check": "exceptions",
            "evidence": ["inplace", "raises:NotImplementedError raised in lowering "
                         "(torch/_inductor/ir.py:make_reindexer)", "view"]}
    hit, _ = match(bugs, root, {"add_.Scalar", "index_put_", "view_dtype"}, {"inductor"})
    assert hit is not None and hit.issue == "pytorch/pytorch#168995"
    hit, _ = match(bugs, root, {"add_.Scalar", "index_put_"}, {"inductor"})  # no dtype view
    assert hit is None or hit.issue != "pytorch/pytorch#168995"


def test_an_out_op_into_a_strided_input_read_by_a_kernel_is_the_strides_bug():
    # audit 47, e6ff1b7889: index_add(x0, ..., out=x0) on a permuted input, then a Triton
    # kernel given x0 with its strides, filed new (the row asked for an in-place op)
    bugs = load_known(CORPUS)
    root = {"stage": "functionalization", "verdict": "miscompile", "check": "values",
            "evidence": ["out", "triton", "strided-inputs"]}
    hit, _ = match(bugs, root, {"index_add.out", "tk.flip_copy"}, {"fx-reinplace"})
    assert hit is not None and hit.issue == "pytorch/pytorch#133512"
    hit, _ = match(bugs, {**root, "evidence": ["out", "triton"]}, {"index_add.out"}, {"fx-reinplace"})
    assert hit is None or hit.issue != "pytorch/pytorch#133512"  # a dense input: not this


_OVERLAP = ("raises:RuntimeError: unsupported operation: some elements of the input tensor "
            "and the written-to tensor refer to a single memor")


def test_a_scatter_whose_src_views_what_it_writes_is_197829_not_198094():
    # audit 47, 7cb320b682: select_scatter(v1, v1.as_strided(...)) reinplaced by Inductor is
    # ground-truth rule 1 (#197829, fixed upstream by #198010); #198094's scatter row took
    # every scatter decision, and it is the overwritten-input bug (rules 3 and 5)
    bugs = load_known(CORPUS)
    ops = {"fz.scaled", "as_strided", "select_scatter"}
    bug, _ = match(bugs, _root("reinplace", [_OVERLAP, "scatter:rule 1"]), ops, {"inductor"})
    assert bug is not None and bug.issue == "pytorch/pytorch#197829", bug
    bug, _ = match(bugs, _root("reinplace", ["scatter:rule 5"]), {"slice_scatter"}, {"inductor"})
    assert bug is not None and bug.issue == "pytorch/pytorch#198094", bug
    # torch.fx.passes.reinplace's overlap refusal on the same program: its Inductor twin is
    # shown, the finding stays new (no issue tracks the FX pass)
    root = _root("reinplace", ["no-decision", _OVERLAP], "crash")
    bug, related = match(bugs, root, ops, {"fx-reinplace"})
    assert bug is None and [b.issue for b in related] == ["pytorch/pytorch#197829"]


def test_a_second_issue_whose_row_matches_too_is_cited_as_related():
    # audit 47, 18200bcea1: scatter_add(..., out=) under dynamic shapes is #194103's op and
    # raises in #122773's frame (get_overlap_status); only #194103 was named
    bugs = load_known(CORPUS)
    root = {"stage": "dynamo", "verdict": "crash", "check": "exceptions", "evidence": ["out"]}
    removed = {"pytorch/pytorch#194103": "ok", "pytorch/pytorch#122773": "ok"}
    said = _TRACE["explanation"]
    bug, related = match(bugs, root, {"scatter_add.out"}, {"inductor"}, removed, explanation=said)
    assert bug is not None and bug.issue == "pytorch/pytorch#194103"
    assert [b.issue for b in related] == ["pytorch/pytorch#122773"]
    # one issue's two rows are one citation, never known and related at once
    bug, related = match(bugs, root, {"scatter.out"}, {"inductor"}, removed, explanation=said)
    assert bug.issue == "pytorch/pytorch#194103" and bug.issue not in [b.issue for b in related]


def test_an_eval_dropout_alias_lost_is_115249_and_its_lost_mutation_195422():
    # audit 48, 3c81bce50d: only the output's aliasing differed (dropout's schema promises a
    # fresh tensor): filed as new; the lost input mutation through it stays #195422
    bugs = load_known(CORPUS)
    root = {"stage": "decomposition", "verdict": "miscompile", "check": "aliasing",
            "evidence": ["view"]}
    bug, related = match(bugs, root, {"dropout_eval"}, {"inductor-reinplace"})
    assert bug is not None and bug.issue == "pytorch/pytorch#115249", bug
    assert [b.issue for b in related] == ["pytorch/pytorch#195422"]
    # fresh user 52's B2: the repro's "Why it is a bug:" quoted this why, which ended "an
    # alias PyTorch's schema does not promise", arguing the opposite of the exit status
    assert "does not promise" not in bug.why and "tracks" in bug.why, bug.why
    bug, _ = match(bugs, {**root, "check": "values"}, {"dropout_eval"}, {"inductor"})
    assert bug is not None and bug.issue == "pytorch/pytorch#195422", bug


def test_dynamo_s_guard_assert_on_a_view_base_s_symbols_is_93419():
    # audit 48, e3042a0817 (filed as new): a resumed frame's view input, dynamic shapes; the
    # symbol's number varies by run, so the error class carries sN
    bugs = load_known(CORPUS)
    root = {"stage": "functionalization", "verdict": "crash", "check": "exceptions",
            "evidence": ["custom", "out", "raises:AssertionError: sources must not be empty "
                         "for symbol sN", "scatter", "view"]}
    bug, _ = match(bugs, root, {"add_out", "as_strided_scatter"}, {"aot_eager"})
    assert bug is not None and bug.issue == "pytorch/pytorch#93419", bug
    # another assert of the same stage is not it
    other = {**root, "evidence": ["view", "raises:AssertionError: Failed to find sN"]}
    bug, _ = match(bugs, other, set(), {"aot_eager"})
    assert bug is None or bug.issue != "pytorch/pytorch#93419", bug


def test_the_legacy_executor_s_requires_grad_is_matched_by_its_explanation():
    # fresh user 51's B2: seed b25's mutant (legacy executor, requires_grad left set) was
    # filed as a hit of a crash entry with no upstream link; the root key cannot tell it
    bugs = load_known(CORPUS)
    root = {"stage": "ts-optimizer", "verdict": "miscompile", "check": "torchscript",
            "evidence": ["functional", "inplace"]}
    ops = {"add.Scalar", "copy_", "mul.Scalar"}
    said = ("legacy call 0 (optimized): input a after the call: requires_grad eager False, "
            "torchscript True | profiling: ok, legacy: {}, simple: ok")
    hit, _ = match(bugs, root, ops, {"torchscript"}, explanation=said.format("miscompile"))
    assert hit is not None and hit.issue == "pytorch/pytorch#126277"
    # the same root with other words, or every executor departing: not this bug
    other = "legacy call 0 (optimized): output 0: values differ (max abs diff 4) | " \
            "profiling: ok, legacy: miscompile, simple: ok"
    assert match(bugs, root, ops, {"torchscript"}, explanation=other)[0] is None
    every = said.format("miscompile").replace("profiling: ok", "profiling: miscompile")
    assert match(bugs, root, ops, {"torchscript"}, explanation=every)[0] is None
    assert match(bugs, root, ops, {"torchscript"})[0] is None  # no explanation given


def test_the_legacy_executor_s_autograd_crashes_are_related_to_it():
    # audit 51: the same DifferentiableGraph refused by autograd, a crash: shown with #126277
    bugs = load_known(CORPUS)
    root = {"stage": "ts-optimizer", "verdict": "crash", "check": "torchscript",
            "evidence": ["functional", "view"]}
    said = ("legacy call 1 (optimized) raised RuntimeError: cannot resize variables that "
            "require grad\nThe following operation failed in the TorchScript interpreter.\n"
            "    return (v6,) | profiling: ok, legacy: crash, simple: ok")
    hit, related = match(bugs, root, {"mean.dim", "resize_as_"}, {"torchscript"}, explanation=said)
    assert hit is None and [b.issue for b in related] == ["pytorch/pytorch#126277"]
    other = said.replace("cannot resize variables that require grad", "size mismatch")
    assert match(bugs, root, {"mean.dim"}, {"torchscript"}, explanation=other) == (None, [])


def test_rotating_zero_buffers_in_a_scripted_loop_are_75794():
    # audit 51, d07b0b381d: upstream since 2022 (seed case b23), filed as new
    bugs = load_known(CORPUS)
    root = {"stage": "ts-optimizer", "verdict": "miscompile", "check": "torchscript",
            "evidence": ["control", "factory"]}
    ops = {"loop_rotate3_accumulate", "zeros"}
    hit, _ = match(bugs, root, ops, {"torchscript"})
    assert hit is not None and hit.issue == "pytorch/pytorch#75794"
    # buffers given as inputs (no factory op), or another stage: not this bug
    inputs = {**root, "evidence": ["control"]}
    assert match(bugs, inputs, {"loop_rotate3_accumulate"}, {"torchscript"})[0] is None
    assert match(bugs, {**root, "stage": "ts-frontend"}, ops, {"torchscript"})[0] is None


def test_a_known_toml_that_cannot_be_read_is_an_error_not_no_known_bugs(tmp_path):
    # fresh user 52's B1: a directory in its place fell back to no known bugs, and a campaign
    # filed #196657 as a new miscompile and exited 1
    (tmp_path / "known.toml").mkdir()
    with pytest.raises(InvalidArgument, match=r"known\.toml: cannot be read \("):
        load_known(tmp_path)
    assert load_known(tmp_path / "elsewhere")  # none there: the checkout's own list


def test_a_dynamic_crash_of_another_error_is_not_122773_nor_related_to_it():
    # audit 56, 262548339d: Dynamo's "Cannot construct ConstantVariable for value of type
    # SymInt" (a stride of index_select(out=)'s result under dynamic shapes) matched #122773's
    # stage, evidence and control and was cited as related: a wrong lead
    bugs = load_known(CORPUS)
    root = {"stage": "dynamo", "verdict": "crash", "check": "exceptions", "evidence": ["out"]}
    said = ("compiled raises _Failed: trace: AssertionError: Cannot construct `ConstantVariable` "
            "for value of type <class 'torch.SymInt'>.; eager does not")
    for got in ("ok", "crash"):
        bug, related = match(bugs, root, {"index_select.out"}, {"inductor"},
                             {"pytorch/pytorch#122773": got}, explanation=said)
        assert bug is None and "pytorch/pytorch#122773" not in [b.issue for b in related]
    bug, _ = match(bugs, root, {"index_select.out"}, {"inductor"},
                   {"pytorch/pytorch#122773": "ok"}, explanation=_TRACE["explanation"])
    assert bug is not None and bug.issue == "pytorch/pytorch#122773"
    # nor is its control run for it (a compile for nothing), before or after the cut
    issues = [b.issue for b in known.control_candidates(bugs, [root], {"index_select.out"},
                                                        "inductor", said)]
    assert "pytorch/pytorch#122773" not in issues
    assert "pytorch/pytorch#122773" in [b.issue for b in known.control_candidates(
        bugs, [root], {"index_select.out"}, "inductor", _TRACE["explanation"])]
    first = [b.issue for b in known.known_first_candidates(bugs, "crash", "inductor",
                                                           {"index_select.out"}, ["out"], said)]
    assert "pytorch/pytorch#122773" not in first
    assert "pytorch/pytorch#122773" in [b.issue for b in known.known_first_candidates(
        bugs, "crash", "inductor", {"index_select.out"}, ["out"], _TRACE["explanation"])]


def test_an_index_add_whose_scalar_codegen_agrees_is_191837():
    # audit 57, 59b1e7f897: x.index_add_(0, idx, y.transpose(1, 2)) with two threads wrote past
    # x (CppTile2DKernel's atomic_add applies the inner offset twice); filed new
    bugs = load_known(CORPUS)
    root = {"stage": "codegen:cpp-vectorized", "verdict": "miscompile", "check": "values",
            "evidence": ["inplace", "strided-inputs"]}
    for op in ("index_add_", "index_add", "index_add.out"):
        bug, _ = match(bugs, root, {op}, {"inductor"})
        assert bug is not None and bug.issue == "pytorch/pytorch#191837", op
    bug, _ = match(bugs, {**root, "stage": "lowering"}, {"index_add_"}, {"inductor"})
    assert bug is None or bug.issue != "pytorch/pytorch#191837"
