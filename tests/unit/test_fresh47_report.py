"""Fresh user 47's report and draft bugs: B3 (a dynamic-shapes repro's row named the compile
call without ``dynamic=True``), B4 (a cost finding's row described a pass-wrapping script
its repro is not) and B12 (a draft said "on cpu" above a repro that needs a GPU)."""

from __future__ import annotations

import json
from pathlib import Path

from aliasfuzz.campaign import corpus as store
from tests.unit.test_corpus_store import _meta, _program

DATA = Path(__file__).resolve().parents[1] / "data"


def _row(tmp_path, program, meta):
    from aliasfuzz.report.data import root_causes

    path, _ = store.write_entry(tmp_path, program, meta)
    seen = {"t": "finding", "id": path.name, "i": 0, "pipeline": meta["expected"]["pipeline"],
            "verdict": meta["expected"]["verdict"], "check": meta["expected"]["check"]}
    (row,) = root_causes(tmp_path, [seen], set())
    return row


def test_a_dynamic_shapes_row_names_the_compile_call_the_repro_makes(tmp_path):
    p = _program()
    row = _row(tmp_path / "a", p, {**_meta(p), "pipeline_options": {"dynamic": True}})
    assert row["repro_way"] == "torch.compile(backend='inductor', dynamic=True)"
    row = _row(tmp_path / "b", p, _meta(p))
    assert row["repro_way"] == "torch.compile(backend='inductor')"


def test_a_cost_finding_row_says_no_pass_is_wrapped(tmp_path):
    # campaign 47's eaede8e418 (a graph-split witness of c06's field[rows] = work): its row
    # said "this script wraps ...reinplace_inplaceable_ops"; its repro compares byte counts
    from aliasfuzz.fuzz.ir import Program

    folder = DATA / "witness_entry"
    meta = json.loads((folder / "meta.json").read_text())
    row = _row(tmp_path, Program.loads((folder / "program.json").read_text()),
               {k: v for k, v in meta.items() if k != "id"})
    assert (row["verdict"], row["check"], row["harness"]) == ("missed-reinplace", "witness", "")


def test_a_draft_of_a_triton_finding_made_on_cpu_says_the_repro_needs_a_gpu():
    from aliasfuzz.campaign.repro import plan
    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.report.upstream import render_draft

    folder = DATA / "not_findings" / "crash-functionalization-0282f30f49"
    program = Program.loads((folder / "program.json").read_text())
    meta = json.loads((folder / "meta.json").read_text())
    assert plan(program, meta).cuda and meta.get("device", "cpu") == "cpu"
    draft = render_draft(program, meta)
    assert "on cpu (Triton's interpreter: the repro needs a GPU, where the fuzzer did not run it)" \
        in " ".join(draft.split()), draft


def test_a_draft_names_what_ran_the_program_as_pytorch_names_it(tmp_path):
    # fresh user 47's B5: "actual (inductor-reinplace, as the fuzzer saw it)", a diff headed
    # "inductor-reinplace: miscompile" and "Hit 3 time(s) by the fuzzer: inductor-reinplace x 1"
    from aliasfuzz.report.upstream import render_draft

    p = _program()
    meta = {**_meta(p), "diff": "inductor-reinplace: miscompile (values)\\n  x differs",
            "hits": [{"pipeline": "inductor-reinplace", "campaign": "c", "program_index": 0,
                      "verdict": "miscompile", "check": "values"}]}
    meta["expected"] = {**meta["expected"], "pipeline": "inductor-reinplace"}
    draft = render_draft(p, meta, campaign_hits={"inductor-reinplace": 1})
    assert "inductor-reinplace" not in draft, draft
    assert "actual (Inductor up to its post-grad passes, as the fuzzer saw it)" in draft
    assert "Inductor up to its post-grad passes: miscompile (values)" in draft
    assert "Inductor up to its post-grad passes × 1" in draft


def test_a_row_whose_repro_shows_another_sighting_says_so(tmp_path):
    # fresh user 47's B7: the row said IndexError (the entry's first sighting, on the fast
    # path), its repro.py (aot_eager, the most public sighting) raised an AssertionError
    from dataclasses import replace

    from aliasfuzz.campaign.repro import plan
    from tests.common.repro_cases import meta_v2

    p = _program()
    meta = meta_v2(p, "inductor-reinplace", "miscompile", "values", "functionalization",
                   explanation="out0: values differ", full="hidden")
    other = replace(p, body=(replace(p.body[0], params={"other": 2.0}), *p.body[1:]))
    meta["hits"].append({**meta["hits"][0], "pipeline": "aot_eager", "program": other.to_json(),
                         "program_index": 5, "explanation": "out0: values differ at [1]"})
    assert not plan(p, meta).own
    row = _row(tmp_path / "a", p, {k: v for k, v in meta.items() if k not in ("meta_version", "id")})
    assert row["repro_sighting"].startswith(
        "repro.py shows another sighting of this root cause (aot_eager"), row["repro_sighting"]
    own = meta_v2(p, "aot_eager", "miscompile", "values", "functionalization")
    assert _row(tmp_path / "b", p, {k: v for k, v in own.items() if k not in ("meta_version", "id")})[
        "repro_sighting"] == ""


def test_an_aliasing_draft_has_no_float_tolerance_paragraph():
    # fresh user 47's B11
    from aliasfuzz.report.upstream import _TOLERANCE, render_draft

    p = _program()
    meta = _meta(p)
    assert _TOLERANCE.strip()[:40] in render_draft(p, meta)
    meta["expected"] = {**meta["expected"], "check": "aliasing"}
    meta["explanation"] = "out0 aliases x0 in eager but is fresh compiled"
    assert _TOLERANCE.strip()[:40] not in render_draft(p, meta)
