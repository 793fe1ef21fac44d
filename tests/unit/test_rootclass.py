"""One corpus entry per bug (issue 12): :func:`aliasfuzz.campaign.rootclass.same_bug` on the
fourth audit's corpus (``tests/data/rootclass/cfresh4.json``: each entry's root key, blame
trail and ops, the four entries whose stage was wrong blamed again with the current blame),
its error normalization, and :func:`aliasfuzz.campaign.corpus.record` merging two keys.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aliasfuzz.campaign.corpus import load_entry, record
from aliasfuzz.campaign.rootclass import error_class, find_same, same_bug
from aliasfuzz.fuzz.ir import Program

DATA = Path(__file__).resolve().parents[1] / "data"
ROWS = json.loads((DATA / "rootclass" / "cfresh4.json").read_text())

#: The auditor's duplicate groups (bench/runs/audit-fourth-2026-12-01-notes.md).
DUPLICATES = [
    {"crash-functionalization-43cbefadbc", "crash-functionalization-f50f475f8f"},
    {"crash-functionalization-6210c968b2", "crash-unblamed-inductor-reinplace-8be8a9c905",
     "crash-unblamed-inductor-69f02e9212"},
    {"crash-reinplace-5004a0012f", "crash-reinplace-a1f8ace866"},
    {"miscompile-lowering-1b9297cb46", "miscompile-lowering-7e27ad2854"},
    {"miscompile-ts-frontend-4cac13817f", "miscompile-ts-frontend-b083bfd656"},
]


def _groups(rows: list[dict]) -> list[set[str]]:
    """Rows grouped as record() files them, in order."""
    firsts: list[tuple[str, dict]] = []
    groups: dict[str, set[str]] = {}
    for r in rows:
        same = find_same(firsts, r)
        if same is None:
            firsts.append((r["entry"], r))
            groups[r["entry"]] = {r["entry"]}
        else:
            groups[same].add(r["entry"])
    return list(groups.values())


def test_the_fourth_audit_s_duplicates_merge_and_nothing_else_does():
    groups = _groups(ROWS)
    merged = [g for g in groups if len(g) > 1]
    assert sorted(map(sorted, merged)) == sorted(map(sorted, DUPLICATES))
    assert len(groups) == len(ROWS) - sum(len(g) - 1 for g in DUPLICATES)
    # the order of arrival does not change the grouping
    assert sorted(map(sorted, _groups(ROWS[::-1]))) == sorted(map(sorted, groups))


def test_the_data_holds_the_corrected_stages():
    stage = {r["entry"]: r["root"]["stage"] for r in ROWS}
    assert stage["miscompile-lowering-1b9297cb46"] == stage["miscompile-lowering-7e27ad2854"] == "reinplace"
    assert stage["crash-unblamed-inductor-69f02e9212"] == "functionalization"
    assert stage["crash-unblamed-inductor-reinplace-8be8a9c905"] == "functionalization"


def _meta(stage="functionalization", verdict="crash", check="exceptions", evidence=("inplace",),
          trail_error=None, ops=("add_.Scalar",)) -> dict:
    trail = [[stage, f"departs (raises {trail_error})"]] if trail_error else [[stage, "departs (x)"]]
    return {"root": {"stage": stage, "verdict": verdict, "check": check,
                     "evidence": list(evidence)},
            "trail": trail, "ops": list(ops)}


def test_the_same_normalized_error_is_one_bug_whatever_the_features_and_check():
    a = _meta(trail_error="RuntimeError: setStorage: sizes [1, 1, 4], strides [1, 4, 2], "
              "storage offset 3 are out of bounds for storage of size 16", evidence=("custom",))
    b = _meta(check="signal:SIGABRT", evidence=("view", "out"),
              trail_error="RuntimeError: setStorage: sizes [3], strides [1], storage offset 65 "
              "are out of bounds for storage of size 144")
    assert same_bug(a, b)
    other = _meta(trail_error="RuntimeError: shape '[3, -1]' is invalid for input of size 25")
    assert not same_bug(a, other)
    assert not same_bug(a, {**b, "root": {**b["root"], "stage": "aot"}})


def test_an_uninformative_error_falls_back_to_features():
    short = "IndexError: list index out of range"
    a = _meta(trail_error=short, evidence=("inplace",), ops=("add_.Scalar",))
    b = _meta(trail_error=short, evidence=("inplace", "view"), ops=("add_.Scalar", "narrow"))
    c = _meta(trail_error=short, evidence=("out",), ops=("mul.out",))
    assert same_bug(a, b) and not same_bug(a, c)


def test_reinplace_merges_unsafe_decision_kinds_only_behind_one_error():
    overlap = ("RuntimeError: unsupported operation: some elements of the input tensor and the "
               "written-to tensor refer to a single memory location.")
    r1 = _meta("reinplace", "miscompile", "values", ["index_put:rule 1"], overlap)
    r5 = _meta("reinplace", "miscompile", "values", ["index_put:rule 5"], overlap)
    assert same_bug(r1, r5)
    assert not same_bug(r1, _meta("reinplace", "miscompile", "values", ["scatter:rule 1"], overlap))
    # value departures at the pass without an error keep their rules apart, except rules 3
    # and 5 (the result used where, in place, it is the input's storage: #198094's family)
    v1 = _meta("reinplace", "miscompile", "values", ["auto_functionalized_v2:rule 1"])
    v2 = _meta("reinplace", "miscompile", "values", ["auto_functionalized_v2:rule 2"])
    v3 = _meta("reinplace", "miscompile", "values", ["auto_functionalized_v2:rule 3"])
    v5 = _meta("reinplace", "miscompile", "values", ["auto_functionalized_v2:rule 5"])
    assert not same_bug(v1, v3) and not same_bug(v2, v5) and not same_bug(v1, v2)
    assert same_bug(v3, v5)


def test_rules_3_and_5_of_one_decision_kind_are_one_bug_whatever_the_check():
    # thirteenth audit: cf2485972f (rule 3, the input's values) and e65ce44d27 (rule 5, an
    # output aliasing the input), one defect of the pass
    values = _meta("reinplace", "miscompile", "values", ["auto_functionalized_v2:rule 3"])
    aliasing = _meta("reinplace", "miscompile", "aliasing", ["auto_functionalized_v2:rule 5"])
    assert same_bug(values, aliasing) and same_bug(aliasing, values)
    # another decision kind, another rule beside them, or another verdict keeps them apart
    assert not same_bug(values, _meta("reinplace", "miscompile", "aliasing", ["index_put:rule 5"]))
    assert not same_bug(values, _meta("reinplace", "miscompile", "aliasing",
                                      ["auto_functionalized_v2:rule 2", "auto_functionalized_v2:rule 5"]))
    assert not same_bug(values, _meta("reinplace", "crash", "exceptions", ["auto_functionalized_v2:rule 5"]))


def test_returned_outputs_aliasing_an_input_by_rule_5_are_one_bug_whatever_the_kind():
    # ninth audit: de21573949 (index_copy(out=)) and e65ce44d27 (a custom op), each a
    # full-range slice_scatter returned aliasing x0 after the reinplace pass (#198094's family)
    a = _meta("reinplace", "miscompile", "aliasing", ["index_put:rule 5"], ops=["index_copy.out"])
    b = _meta("reinplace", "miscompile", "aliasing", ["auto_functionalized_v2:rule 5"],
              ops=["fz.bump_pair"])
    assert same_bug(a, b) and same_bug(b, a)
    # another rule beside rule 5, a value departure, or another stage keeps them apart
    mixed = _meta("reinplace", "miscompile", "aliasing", ["index_put:rule 1", "scatter:rule 5"])
    assert not same_bug(a, mixed)
    values = _meta("reinplace", "miscompile", "values", ["auto_functionalized_v2:rule 5"])
    assert not same_bug(values, _meta("reinplace", "miscompile", "values", ["index_put:rule 5"]))
    assert not same_bug(a, _meta("lowering", "miscompile", "aliasing", ["index_put:rule 5"]))


def test_subsumption_needs_features_and_ops_in_the_same_direction():
    small = _meta("ts-frontend", "miscompile", "torchscript", ["inplace"], ops=["_foreach_add_.Scalar"])
    big = _meta("ts-frontend", "miscompile", "torchscript", ["inplace", "view"],
                ops=["_foreach_add_.Scalar", "unbind"])
    other_op = _meta("ts-frontend", "miscompile", "torchscript", ["inplace", "view"], ops=["add_.Scalar", "unbind"])
    assert same_bug(small, big) and same_bug(big, small)
    assert not same_bug(small, other_op)
    assert not same_bug(small, {**big, "root": {**big["root"], "check": "values"}})
    known = {**small, "root": {**small["root"], "check": "known", "evidence": ["known:x"]}}
    assert not same_bug(known, big)


def test_overloads_of_one_aten_op_are_one_op_and_namespaces_are_not_overloads():
    # fifth audit: c70b39c863 (list form, with an incidental custom op) and b083bfd656
    # (scalar form) are one TorchScript bug
    scalar = _meta("ts-frontend", "miscompile", "torchscript", ["inplace"], ops=["_foreach_add_.Scalar"])
    listed = _meta("ts-frontend", "miscompile", "torchscript", ["inplace"],
                   ops=["_foreach_add_.List", "fz.add_one_"])
    assert same_bug(scalar, listed) and same_bug(listed, scalar)
    # other packets stay apart: in-place vs out=, and two custom ops of one namespace
    inplace = _meta("ts-frontend", "miscompile", "torchscript", ["inplace"], ops=["add_.Scalar"])
    out = _meta("ts-frontend", "miscompile", "torchscript", ["inplace", "out"], ops=["add.out"])
    assert not same_bug(inplace, out)
    one = _meta("functionalization", "miscompile", "values", ["custom"], ops=["fz.add_one_"])
    two = _meta("functionalization", "miscompile", "values", ["custom", "view"], ops=["fz.halve_"])
    assert same_bug(one, {**two, "ops": ["fz.add_one_", "fz.halve_"]})  # the features alone
    assert not same_bug(one, two)


def test_in_place_foreach_ops_are_one_op_at_the_torchscript_frontend_only():
    # twelfth audit waves A and C: the frontend drops any in-place foreach op on a local list;
    # the c12 campaign filed it five times (evidence and ops as in each entry's meta.json)
    c12 = [(["inplace"], ["_foreach_mul_.List"]),  # 4cac13817f
           (["inplace", "view"], ["_foreach_lerp_.Scalar", "unbind"]),  # b083bfd656
           (["custom", "inplace"], ["_foreach_add_.List", "fz.storage_layout"]),  # c70b39c863
           (["functional", "inplace"], ["_foreach_add_.List", "clone"]),  # e3ba2d221d
           (["factory", "inplace"], ["_foreach_add_.Scalar", "full"])]  # f7c84144f5
    metas = [_meta("ts-frontend", "miscompile", "torchscript", ev, ops=ops) for ev, ops in c12]
    assert all(same_bug(metas[0], m) and same_bug(m, metas[0]) for m in metas[1:])
    rows = [{**m, "entry": str(k)} for k, m in enumerate(metas)]
    assert _groups(rows) == [{"0", "1", "2", "3", "4"}]  # the smallest first: one entry
    # a functional foreach op, or an in-place op that is no foreach op, stays apart (equal
    # root keys are one entry anyway: these differ in a feature)
    functional = _meta("ts-frontend", "miscompile", "torchscript", ["functional", "inplace"],
                       ops=["_foreach_add.List", "_foreach_add_.List"])
    assert same_bug(metas[0], functional)  # it holds the in-place one's whole cause
    assert not same_bug(metas[0], {**functional, "ops": ["_foreach_add.List", "add_.Scalar"]})
    assert not same_bug(metas[0], _meta("ts-frontend", "miscompile", "torchscript",
                                        ["inplace", "view"], ops=["add_.Scalar", "unbind"]))
    # at any other stage the arithmetic may be the bug: the packets stay apart
    mul = _meta("functionalization", "miscompile", "values", ["inplace"], ops=["_foreach_mul_.List"])
    add = _meta("functionalization", "miscompile", "values", ["inplace", "view"],
                ops=["_foreach_add_.List", "unbind"])
    assert not same_bug(mul, add)
    assert same_bug({**mul, "ops": ["_foreach_add_.Scalar"]}, add)  # one packet there too


@pytest.mark.parametrize(("text", "want"), [
    ("raises IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 2)",
     "IndexError: Dimension out of range (expected to be in range of [*], but got N)"),
    ("raises BackendCompilerFailed: backend='compiler_fn' raised: <- RuntimeError: sources must "
     "not be empty for symbol s47", "RuntimeError: sources must not be empty for symbol sN"),
    ("raises RuntimeError: setStorage: storage of size 16; the final pipeline's error differs",
     None),  # too few words to tell bugs apart
    ("raises InductorError: AssertionError: Set TORCHDYNAMO_VERBOSE=1 for the internal stack "
     "trace", None),
    ("raises WorkerDied: worker died (signal:SIGABRT) while running the program", None),
    ("inputs: input x1: values differ at [0, 1]", None),
    # shapes printed as tuples (eighth audit: 63f507a08e and f50f475f8f, one ViewMeta replay)
    ("raises AssertionError: incorrect out shape after application of ViewMeta sequence: (3,) "
     "(actual) vs (3, 1) (expected)", "AssertionError: incorrect out shape after application "
     "of ViewMeta sequence: (*) (actual) vs (*) (expected)"),
    ("raises AssertionError: incorrect out shape after application of ViewMeta sequence: (1, 9) "
     "(actual) vs (1, 3) (expected)", "AssertionError: incorrect out shape after application "
     "of ViewMeta sequence: (*) (actual) vs (*) (expected)"),
])
def test_error_class(text, want):
    assert error_class(text) == want


def test_record_adds_the_same_bug_under_another_key_as_a_hit(tmp_path):
    overlap = ("RuntimeError: unsupported operation: some elements of the input tensor and the "
               "written-to tensor refer to a single memory location. Please clone() the tensor "
               "before performing the operation.")
    paths = []
    for i, (entry, rule) in enumerate([("miscompile-lowering-1b9297cb46", 1),
                                       ("miscompile-lowering-7e27ad2854", 5)]):
        p = Program.from_json(json.loads((DATA / "blame" / f"{entry}.json").read_text()))
        outcome = {"verdict": "miscompile", "check": "values", "explanation": "differs",
                   "decisions": [{"kind": "index_put", "reinplaced": True, "truth": "unsafe",
                                  "rule": rule, "claim": "unsafe-reinplace"}]}
        blame = {"stage": "reinplace", "stages": ["reinplace"],
                 "trail": [["functionalization", "agrees"], ["reinplace", f"departs (raises {overlap})"]]}
        found = record(tmp_path, p, p, outcome, "inductor", blame, [],
                       {"campaign": "t", "program_index": i})
        paths += found.paths
    assert paths[0] == paths[1]
    assert len(load_entry(paths[0]).meta["hits"]) == 2
    assert len([d for d in tmp_path.iterdir() if d.is_dir()]) == 1


def test_mutating_custom_ops_are_one_op_at_inductor_s_compiled_stages_only():
    # twelfth audit: a pointwise read of a buffer scheduled after the fallback kernel of a
    # custom op that writes it, once through fz.add_one_ (6d3196a755), once through
    # fz.copy_into on an as_strided view (d585dcebc4); evidence and ops as in their meta.json
    small = _meta("lowering", "miscompile", "values", ["custom", "inplace"],
                  ops=["addcmul_", "fz.add_one_"])
    big = _meta("lowering", "miscompile", "values", ["custom", "functional", "inplace", "view"],
                ops=["as_strided", "matmul", "addcmul_", "fz.copy_into"])
    assert same_bug(small, big) and same_bug(big, small)
    assert same_bug({**small, "root": {**small["root"], "stage": "scheduler"}},
                    {**big, "root": {**big["root"], "stage": "scheduler"}})
    # a functional custom op is not a mutating one, and other stages keep the op names
    functional = {**big, "ops": ["as_strided", "matmul", "addcmul_", "fz.scaled"]}
    assert not same_bug(small, functional)
    at = {**small, "root": {**small["root"], "stage": "functionalization"}}
    assert not same_bug(at, {**big, "root": {**big["root"], "stage": "functionalization"}})


def test_around_a_mutating_fallback_pointwise_ops_and_their_spellings_are_one():
    # nineteenth audit: 9b5ae05429 (clone and add_ read x before fz.copy_into writes it) and
    # 1b9297cb46 (mul(out=) reads x before fz.halve_ writes it), both a pending pointwise
    # read that lowering emits after the fallback; evidence and ops as in their meta.json
    a = _meta("lowering", "miscompile", "values", ["custom", "functional", "inplace"],
              ops=["add_.Scalar", "clone", "fz.copy_into"])
    b = _meta("lowering", "miscompile", "values", ["custom", "out"], ops=["fz.halve_", "mul.out"])
    assert same_bug(a, b) and same_bug(b, a)
    # a non-pointwise reader (index_put) stays another op, another feature stays a feature
    c = _meta("lowering", "miscompile", "values", ["custom", "out"], ops=["fz.halve_", "index_put_"])
    assert not same_bug(a, c)
    d = _meta("lowering", "miscompile", "values", ["custom", "out", "strided-inputs"],
              ops=["fz.halve_", "mul.out"])
    assert same_bug(b, d) and not same_bug(a, {**d, "ops": ["fz.halve_", "index_put_"]})
    # without a mutating custom op in both, the spellings stay apart
    e = _meta("lowering", "miscompile", "values", ["out"], ops=["mul.out"])
    f = _meta("lowering", "miscompile", "values", ["functional", "inplace"], ops=["add_.Scalar", "clone"])
    assert not same_bug(e, f)


def test_an_assert_without_message_is_told_apart_by_where_inductor_raised_it():
    # thirtieth audit: three vectorized C++ codegen crashes, one CppVecKernel.store assert
    # (its message empty), filed as three entries because their ops differ
    def cpp(ops, evidence, site="codegen (torch/_inductor/codegen/cpp.py:store)"):
        departs = "departs (raises InductorError: AssertionError:  <- AssertionError: )"
        return {"root": {"stage": "codegen:cpp-vectorized", "verdict": "crash",
                         "check": "exceptions", "evidence": list(evidence)},
                "trail": [["dynamo", "agrees"], ["lowering", departs], ["scheduler", departs],
                          ["raised-in", site], ["scalar-codegen", "cpp.simdlen=1: agrees"]],
                "ops": list(ops)}

    add = cpp(["index_add_"], ["inplace"])
    put = cpp(["index_put_.Tensor", "zeros"], ["factory", "inplace"])
    out = cpp(["index_add.out"], ["out"])
    assert same_bug(add, put) and same_bug(add, out) and same_bug(put, out)
    # another frame is another bug; without a frame the features decide (as before)
    assert not same_bug(add, cpp(["index_add_"], ["inplace", "view"],
                                 site="scheduler (torch/_inductor/scheduler.py:fuse)"))
    bare = [cpp(ops, ev) for ops, ev in ((["index_add_"], ["inplace"]), (["mul.out"], ["out"]))]
    for m in bare:
        m["trail"] = [t for t in m["trail"] if t[0] != "raised-in"]
    assert not same_bug(*bare)


def _ts(verdict: str, said: str, legacy_only: bool = True, evidence=("functional",)) -> dict:
    executors = ("profiling: ok, legacy: {v}, simple: ok" if legacy_only
                 else "profiling: {v}, legacy: {v}, simple: ok").format(v=verdict)
    meta = _meta(stage="ts-optimizer", verdict=verdict, check="torchscript",
                 evidence=evidence, ops=("add.Tensor",))
    return {**meta, "explanation": f"legacy call 0 (optimized){said} | {executors}"}


def test_the_legacy_executor_s_autograd_graph_is_one_bug_whatever_the_verdict():
    # audit 40: a crash and two requires_grad departures of the legacy executor alone, one
    # DifferentiableGraph around a program that asked for no gradient, filed three times
    crash = _ts("crash", " raised RuntimeError: Autograd not support dtype: Bool",
                evidence=("functional", "out", "scatter"))
    an_input = _ts("miscompile", ": input a after the call: requires_grad eager False, torchscript True",
                   evidence=("functional", "inplace"))
    an_output = _ts("miscompile", ": output 0: requires_grad eager False, torchscript True")
    assert same_bug(crash, an_input) and same_bug(an_input, an_output) and same_bug(an_output, crash)
    values = _ts("miscompile", ": output 0: values differ (max abs diff 4)",
                 evidence=("control", "factory"))
    every_executor = _ts("miscompile", ": output 0: requires_grad eager False, torchscript True",
                         legacy_only=False, evidence=("view",))
    assert not same_bug(an_output, values) and not same_bug(an_output, every_executor)
    elsewhere = {**an_output, "root": {**an_output["root"], "stage": "ts-fuser"}}
    assert not same_bug(crash, elsewhere)
    # audit 51 (30c2059388, e88cc7aa42): the same graph refused by autograd in its own words
    resize = _ts("crash", " raised RuntimeError: cannot resize variables that require grad",
                 evidence=("functional", "view"))
    out = _ts("crash", " raised RuntimeError: add(): functions with out=... arguments don't "
                       "support automatic differentiation, but one of the arguments requires grad.",
              evidence=("out",))
    assert same_bug(crash, resize) and same_bug(crash, out) and same_bug(resize, an_output)
    other = _ts("crash", " raised RuntimeError: The size of tensor a (2) must match the size of "
                         "tensor b (3) at non-singleton dimension 0", evidence=("view",))
    assert not same_bug(crash, other)


def test_frontend_foreach_programs_are_one_bug_whatever_builds_the_list():
    # H100 campaign of 2026-12-06 from an empty corpus: the bare foreach program never came,
    # so subsumption left four entries (evidence and ops as in each entry's meta.json)
    h100 = [(["inplace", "view"], ["_foreach_add_.List", "unbind"]),  # b083bfd656
            (["custom", "inplace"], ["_foreach_add_.Scalar", "fz.strides_of"]),  # c70b39c863
            (["functional", "inplace"], ["_foreach_add_.Scalar", "clone"]),  # e3ba2d221d
            (["factory", "inplace"], ["_foreach_add_.Scalar", "zeros"])]  # f7c84144f5
    metas = [_meta("ts-frontend", "miscompile", "torchscript", ev, ops=ops) for ev, ops in h100]
    rows = [{**m, "entry": str(k)} for k, m in enumerate(metas)]
    assert _groups(rows) == [{"0", "1", "2", "3"}]
    assert _groups(rows[::-1]) == [{"0", "1", "2", "3"}]
    clone = metas[2]
    # another write beside the foreach op, another input feature, or another stage: apart
    assert not same_bug(clone, _meta("ts-frontend", "miscompile", "torchscript",
                                     ["inplace"], ops=["_foreach_add_.Scalar", "add_.Scalar"]))
    assert not same_bug(clone, _meta("ts-frontend", "miscompile", "torchscript",
                                     ["aliased-inputs", "inplace"], ops=["_foreach_add_.Scalar", "zeros"]))
    assert not same_bug(clone, _meta("ts-frontend", "miscompile", "torchscript",
                                     ["custom", "inplace"], ops=["_foreach_add_.Scalar", "fz.halve_"]))
    at_functionalization = [{**m, "root": {**m["root"], "stage": "functionalization"}} for m in metas]
    assert not same_bug(at_functionalization[0], at_functionalization[2])


def _rewritten(verdict, check, ops, error=None, dynamo="agrees") -> dict:
    meta = _meta("lowering", verdict, check, ["inplace"], trail_error=error, ops=ops)
    meta["trail"].append(["enabled-by-dynamo", f"enable_dynamo_decompositions=False: {dynamo}"
                          + ("; the blame stands (Dynamo's graph runs right eagerly)"
                             if dynamo == "agrees" else "")])
    return meta


def test_findings_of_one_dynamo_rewrite_are_one_bug_whatever_the_verdict():
    # audit 50: the fma lowering's integer promotion, once as a wrong dtype (6d3196a755),
    # once as a broadcast assert on the promoted buffer (baa68a8925)
    dtype = _rewritten("miscompile", "values", ["addcmul_.default", "fz.storage_layout"])
    broadcast = _rewritten("crash", "exceptions", ["addcmul_.default", "view_dtype"],
                           error="InductorError: LoweringException: AssertionError: Broadcast "
                                 "failed in ExpandView([12], [3]) on dimension 0")
    assert same_bug(dtype, broadcast) and same_bug(broadcast, dtype)
    # the rewrite not needed by one of them, another rewritten op, or no Inductor stage
    assert not same_bug(dtype, _rewritten("crash", "exceptions", broadcast["ops"],
                                          error=broadcast["trail"][0][1][16:-1], dynamo="departs"))
    assert not same_bug(dtype, _rewritten("crash", "exceptions", ["addcdiv_.default", "view_dtype"],
                                          error="InductorError: LoweringException: AssertionError: "
                                                "Broadcast failed in ExpandView([12], [3]) on dimension 0"))
    moved = {**broadcast, "root": {**broadcast["root"], "stage": "functionalization"}}
    assert not same_bug(dtype, moved)


def test_aten_s_and_its_python_reference_s_wordings_of_one_check_are_one_error():
    # H100 campaign of 2026-12-06: an int32 view expanded and written in place, traced by
    # aot_eager (the Python reference raises) and run by torch.func.functionalize (ATen does);
    # the root keys hold each error (corpus.roots), so they differ
    def crash(ops, error):
        return _meta(evidence=("inplace", "view", f"raises:{error_class('raises ' + error)}"),
                     ops=ops, trail_error=error)

    traced = crash(("add_.Scalar", "expand", "view_dtype"),
                   "BackendCompilerFailed: backend='backend' raised: <- RuntimeError: expand: "
                   "attempting to expand a dimension of length 6 -> 3!")
    ran = crash(("expand", "setitem_iadd", "view_dtype"),
                "RuntimeError: The expanded size of the tensor (3) must match the existing size "
                "(6) at non-singleton dimension 2.  Target sizes: [0, 2, 3].  Tensor sizes: [2, 6]")
    assert traced["root"] != ran["root"]
    assert same_bug(traced, ran) and same_bug(ran, traced)
    other = crash(("add_.Scalar", "expand", "view_dtype"),
                  "RuntimeError: shape '[2]' is invalid for input of size 24 in a view")
    assert not same_bug(traced, other) and not same_bug(ran, other)
