"""Upstream issue drafts (:mod:`aliasfuzz.report.upstream`): the sections PyTorch's bug
report forms ask for, filled from a corpus entry; written for new root causes only."""

from __future__ import annotations

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign.repro import render_repro, title
from aliasfuzz.report.upstream import render_draft, write_drafts
from tests.common.repro_cases import CASES


def _case(name):
    program, meta, _ = CASES[name]
    return program, meta


def test_a_torch_compile_draft_has_the_pt2_form_sections():
    program, meta = _case("b05-inductor")
    meta = {**meta, "trail": [["dynamo", "agrees"], ["decomposition", "agrees"],
                              ["joint:remove_noop_ops", "departs (values: out0: 0 vs 3)"],
                              ["post-grad:reinplace", "departs (values: out0: 0 vs 3)"]],
            "diff": "inductor: miscompile (values)\n  out0: values differ at [0]: 0 in eager, 3 compiled"}
    md = render_draft(program, meta, campaign_hits={"inductor": 2})
    lines = md.splitlines()
    assert lines[0] == "# " + title(meta)  # one line: stage and effect
    assert "pt2-bug-report.yml" in md and 'label "topic: fuzzer"' in md
    for section in ("### 🐛 Describe the bug", "### Error logs", "### Versions"):
        assert lines.count(section) == 1
    assert "- `joint:remove_noop_ops`: departs (values: out0: 0 vs 3) **← blamed**" in lines
    assert "- `post-grad:reinplace`: departs (same)" in lines
    # the repro is the same file the corpus holds, in a python block
    repro = md.split("```python\n", 1)[1].split("```", 1)[0]
    assert repro == render_repro(program, meta)
    assert "0 in eager, 3 compiled" in md.split("Expected (eager) vs actual", 1)[1]
    assert "torch.testing.assert_close" in md and "fp64" in md
    assert "No error: the compiled program runs and returns wrong values." in md
    assert f"Found with torch {meta['versions']['torch']}" in md
    assert "python -m torch.utils.collect_env" in md
    assert "Hit 1 time(s) by the fuzzer: torch.compile(backend=\"inductor\") × 1 (this campaign: torch.compile(backend=\"inductor\") × 2)." in md


def test_crash_and_torchscript_drafts_use_the_error_logs_and_the_plain_form():
    program, meta = _case("crash-torchscript")
    md = render_draft(program, meta)
    assert "bug-report.yml" in md and "pt2-bug-report.yml" not in md
    logs = md.split("### Error logs", 1)[1].split("### Versions", 1)[0]
    assert "shape '[3]' is invalid" in logs and "No error" not in logs
    assert "torch.jit.script raises where eager does not" in md.splitlines()[0]


def test_missed_reinplace_and_harness_drafts_say_what_it_costs_and_why_a_harness():
    program, meta = _case("b20-missed-fast-hidden")
    md = render_draft(program, meta)
    assert "keeps a copy that writing in place would avoid" in md
    assert "> This repro needs more than public API: full torch.compile" in md
    assert "agreed with eager" in md
    assert "Expected (eager) vs actual" not in md and "What the fuzzer measured" in md


def test_drafts_are_written_for_new_root_causes_only(tmp_path):
    rows = []
    for name, status in (("b05-inductor", "new"), ("b03-inductor", "known"),
                         ("b07-aot-eager-sighting", "corpus")):
        program, meta = _case(name)
        meta = {k: v for k, v in meta.items() if k != "id"}
        path, _ = store.write_entry(tmp_path / "corpus", program, meta)
        rows.append({"id": path.name, "status": status, "hits": {"inductor": 1}})
    rows.append({"id": "gone", "status": "new", "error": "unreadable"})
    written = write_drafts(rows, tmp_path / "corpus", tmp_path / "report")
    assert written == [tmp_path / "report" / "upstream" / f"{rows[0]['id']}.md"]
    assert written[0].read_text().startswith("# [inductor] joint-graph pass remove_noop_ops")


def test_a_witness_draft_describes_the_cost_claim_and_names_no_stage():
    # a fresh user: the witness finding's draft said "departs from eager first there" and
    # described the reinplace harness, while its repro compares two public compiles
    import json
    from pathlib import Path

    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.report.upstream import render_draft

    entry = Path(__file__).resolve().parents[1] / "data" / "witness" / "missed-reinplace-unblamed-inductor-a1b3b904b1"
    meta = json.loads((entry / "meta.json").read_text())
    text = render_draft(Program.loads((entry / "program.json").read_text()), meta)
    assert "departs from eager first" not in text and "needs more than public API" not in text
    assert "moves more bytes per call for `f` than for `f_witness`" in text
    assert "def f_witness(" in text and "4 when `f` and `f_witness`" in text
    assert "(not cut stage by stage: a cost finding" in text and "Where it breaks" not in text
    # fresh user 47's B11: a cost claim has no wrong result to call "actual"
    assert "Expected (eager) vs actual" not in text
    assert "What the fuzzer measured (torch.compile(backend=\"inductor\"); values agree" in text


def test_a_draft_says_why_it_is_a_bug_or_that_the_reason_is_still_to_write():
    # fresh users 51 and 52's B6: a draft quoting PyTorch's "banned as the behavior is not
    # well defined" gave no reason why it is a bug; a triager would close it as by design
    def why(md: str) -> str:
        return md.split("**Why it is a bug**", 1)[1].split("\n\n", 1)[0]

    program, meta = _case("b05-inductor")
    assert "eager's values up to floating-point reassociation" in why(render_draft(program, meta))
    program, meta = _case("crash-torchscript")
    said = why(render_draft(program, meta))
    assert "eager runs this program" in said and "ill-defined" not in said, said
    banned = {**meta, "explanation": "RuntimeError: unsupported operation: this is banned as "
                                     "the behavior is not well defined"}
    said = why(render_draft(program, banned))
    assert "write down why it is well defined" in said, said
    program, meta = _case("b20-missed-fast-hidden")
    assert "performance issue" in why(render_draft(program, meta))


def test_a_dynamic_shape_sighting_s_draft_names_dynamic_its_pipeline_and_the_caught_error():
    # fresh user 53's B1/B2 (campaign 53, 20e6e2b026, known #122773 unset to get a draft):
    # the prose said backend='aot_eager' without dynamic=True (static compiles run), the
    # "actual" heading named the entry's pipeline (Inductor up to its post-grad passes) above
    # an aot_eager repro, and "Error logs" held only Dynamo's wrapper of the error
    from pathlib import Path

    entry = store.load_entry(Path(__file__).resolve().parents[1] / "data" / "upstream"
                             / "crash-dynamo-20e6e2b026")
    meta = {**entry.meta, "known": None}
    md = render_draft(entry.program, meta)
    assert "torch.compile(f, backend='aot_eager', dynamic=True) raises" in md, md[:1500]
    assert "Minimal repro (torch.compile(f, backend='aot_eager', dynamic=True);" in md
    assert "Expected (eager) vs actual (torch.compile(backend=\"aot_eager\")" in md, md
    logs = md.split("### Error logs", 1)[1].split("### Versions", 1)[0]
    assert "Cannot call numel() on tensor with symbolic sizes/strides" in logs, logs


def test_an_overlap_refusal_of_a_view_that_overlaps_nothing_says_why_it_is_a_bug():
    # fresh user 55's B3 (b5b1f4cc64): x1.unfold(0, 3, 2) of a (3, 3) input is one window;
    # functionalization refuses the add_ on it as "banned as the behavior is not well
    # defined", and neither the repro nor the draft said the view overlaps nothing
    import ast
    import json
    from pathlib import Path

    from aliasfuzz.campaign import corpus as store
    from aliasfuzz.campaign._repro_words import overlap_refusal
    from aliasfuzz.campaign.repro import render_repro
    from aliasfuzz.fuzz.ir import Program

    e = store.load_entry(Path(__file__).resolve().parents[1] / "data" / "upstream"
                         / "crash-functionalization-b5b1f4cc64")
    doc = " ".join(ast.get_docstring(ast.parse(render_repro(e.program, e.meta))).split())
    assert ("Why it is a bug: the unfold view the program writes, (1, 3, 3) of strides (6, 1, 3), "
            "reaches 9 distinct storage elements") in doc, doc
    md = " ".join(render_draft(e.program, e.meta).split())
    assert "PyTorch's error calls it ill-defined, but the unfold view" in md, md
    assert "write down why it is well defined" not in md, md
    # windows that do overlap (size 2, step 1): the refusal may be right, nothing is said
    d = e.program.to_json()
    d["body"][0]["params"] = {"dim": 0, "size": 2, "step": 1}
    overlapping = Program.from_json(json.loads(json.dumps(d)))
    assert overlap_refusal(e.meta, overlapping) is None
    assert overlap_refusal({**e.meta, "explanation": "RuntimeError: other"}, e.program) is None
