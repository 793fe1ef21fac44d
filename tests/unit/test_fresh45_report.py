"""Fresh user 45's report bugs: B3 (a sighting of another verdict merged into an entry was
labelled with its verdict over the entry's crash alone) and B4 (the harness's ``_Failed:``
wrapper in explanations, the report and issue drafts)."""

from __future__ import annotations

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign._repro_words import shown
from aliasfuzz.campaign.known import _failed_at
from tests.unit.test_corpus_store import _meta, _program

CRASH = "compiled raises _Failed: trace: RuntimeError: While executing unfold, boom; eager does not"


def test_shown_names_the_error_and_its_phase_without_the_wrapper():
    assert shown(CRASH) == ("compiled raises RuntimeError: While executing unfold, boom "
                            "(while compiling); eager does not")
    run = "compiled raises _Failed: run: IndexError: out of range; eager does not"
    assert shown(run) == "compiled raises IndexError: out of range (when run); eager does not"
    # a diff's column cut short keeps no phase, and loses the wrapper
    assert shown("out0 | None | '_Failed: trace: RuntimeError: While e") == \
        "out0 | None | 'RuntimeError: While e"
    assert shown("x differs at (0,)") == "x differs at (0,)"


def test_the_stored_explanation_keeps_the_phase_the_controls_read():
    # shown() is for readers only: known._failed_at reads the phase from the stored text
    assert _failed_at({"explanation": CRASH}) is not None
    assert _failed_at({"explanation": shown(CRASH)}) is None


def _crash_entry(tmp_path, hits):
    p = _program()
    meta = {**_meta(p, "crash"), "explanation": CRASH,
            "diff": "out0 | None | '_Failed: trace: RuntimeError: While e", "hits": hits}
    meta["expected"] = {**meta["expected"], "check": "exceptions"}
    path, _ = store.write_entry(tmp_path, p, meta)
    return p, path


def test_a_report_row_and_draft_show_no_wrapper(tmp_path):
    from aliasfuzz.report.data import root_causes
    from aliasfuzz.report.upstream import render_draft

    p, path = _crash_entry(tmp_path, [])
    seen = {"t": "finding", "id": path.name, "i": 3, "pipeline": "inductor",
            "verdict": "crash", "check": "exceptions"}
    (row,) = root_causes(tmp_path, [seen], set(), "c1")
    assert "_Failed" not in row["explanation"] + row["diff"], row
    assert "(while compiling)" in row["explanation"]
    draft = render_draft(p, store.load_entry(path).meta)
    assert "_Failed" not in draft and "RuntimeError: While executing unfold" in draft


def test_a_sighting_of_another_verdict_is_shown_beside_the_entrys(tmp_path):
    from aliasfuzz.report.data import root_causes

    said = "output 0: requires_grad eager False, torchscript True"
    hits = [{"pipeline": "torchscript", "campaign": "c0", "program_index": 5,
             "verdict": "miscompile", "check": "values", "explanation": "an older campaign's"},
            {"pipeline": "torchscript", "campaign": "c1", "program_index": 5,
             "verdict": "miscompile", "check": "values", "explanation": said}]
    _, path = _crash_entry(tmp_path, hits)
    seen = {"t": "finding", "id": path.name, "i": 5, "pipeline": "torchscript",
            "verdict": "miscompile", "check": "values"}
    (row,) = root_causes(tmp_path, [seen], set(), "c1")
    # the row's verdict and check are the entry's own, which its explanation shows
    assert (row["verdict"], row["check"]) == ("crash", "exceptions")
    assert row["campaign_checks"] == ["miscompile / values"]
    (s,) = row["campaign_sightings"]
    assert (s["i"], s["pipeline"], s["explanation"]) == (5, "torchscript", said)
    # the entry's own verdict sighted again: nothing beside it
    (row,) = root_causes(tmp_path, [{**seen, "verdict": "crash", "check": "exceptions"}],
                         set(), "c1")
    assert row["campaign_checks"] == [] and row["campaign_sightings"] == []


TRACER = ("compiled raises _Failed: trace: BackendCompilerFailed: backend='backend' raised: "
          "RuntimeError: s18**2 (<class 'torch.SymInt'>, 140118345716880)is not tracked with "
          "proxy for <torch.fx.experimental.proxy_tensor.PythonKeyTracer object at "
          "0x7f6fd8484b10>; eager does not")


def test_a_title_names_no_object_identity():
    # audit 46, ddd5e9100d: the title was the raw message, an id and an address in it
    from aliasfuzz.campaign._repro_words import mismatch

    assert mismatch(TRACER) == ("RuntimeError: s18**2 is not tracked with proxy for "
                                "PythonKeyTracer (while compiling)")


def test_one_error_is_one_class_whatever_the_objects_address():
    from aliasfuzz.campaign.rootclass import error_class

    said = "departs (raises RuntimeError: tracer <Tracer object at 0x7f6fd8484b10> lost)"
    other = said.replace("0x7f6fd8484b10", "0x7f6fd34b91ae")
    assert error_class(said) == error_class(other) == "RuntimeError: tracer <Tracer object at ADDR> lost)"


def test_a_title_says_the_blamed_stage_wrote_a_self_overlapping_tensor():
    # audit 46, ec5377b470: "functionalization mutates an input differently from eager", and
    # nowhere that the input overlaps itself (aot_eager happened to write it back right)
    from aliasfuzz.campaign.repro import title

    od = ("departs (order-dependent write: copy_ into a (3, 4, 2) tensor of strides (12, 2, 4) "
          "whose indices [2, 0, 1] and [2, 2, 0] reach one storage element, with different "
          "values (28.0 and 30.0): the result depends on the write order)")
    meta = {"root": {"stage": "functionalization", "verdict": "miscompile", "check": "inputs"},
            "expected": {"pipeline": "inductor", "verdict": "miscompile", "check": "inputs"},
            "explanation": "input x0: values differ at [2, 0, 1]: 30.0 in eager, 28.0 compiled",
            "trail": [["dynamo", "agrees"], ["functionalization", od],
                      ["lowering", "departs (inputs: input x0: values differ)"]]}
    assert title(meta) == (
        "[aot_autograd] functionalization writes a self-overlapping (3, 4, 2) tensor of strides "
        "(12, 2, 4) with one copy_, whose result depends on the write order; compiled, the "
        "program mutates an input differently from eager: input x0: values differ at "
        "[2, 0, 1]: 30.0 in eager, 28.0 compiled")
    # fresh user 55's B4: "..., and mutates an input differently" read as the stage's own
    # result, where its graph run eagerly gives eager's values
    # the order-dependent row of another stage than the blamed one: not this stage's words
    meta["root"]["stage"] = "lowering"
    assert "self-overlapping" not in title(meta)


def test_a_title_leaves_out_a_second_opinion_that_could_not_run():
    # fresh user 47's B2: "...; second opinion unavailable (deterministic: RuntimeError: put_
    # does not have a deterministic implementation, but you set ...)" in a title and a draft
    from aliasfuzz.campaign._repro_words import mismatch

    said = ("out0: values differ at [3, 0]: 3.0 in eager, 9.0 compiled; second opinion "
            "unavailable (deterministic: RuntimeError: put_ does not have a deterministic "
            "implementation, but you set 'torch.use_deterministic_algorithms(True)'): first "
            "verdict kept")
    assert mismatch(said) == "out0: values differ at [3, 0]: 3.0 in eager, 9.0 compiled"
