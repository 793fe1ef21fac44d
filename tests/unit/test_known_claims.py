"""Findings matched to a known upstream bug say so up front, and every claim names the
observable that differs (third audit, rows 11, 13 and 19).

A known finding's ``repro.py`` docstring and upstream draft start with ``known upstream:
<issue> — <title>`` and print the bug's ``why`` (``corpus/known.toml``); the claim line is the
value that differs (which input or output, eager value against compiled value) whenever a
sighting shows one, and says plainly when only output aliasing differs. A finding of no
known bug renders as before.
"""

from __future__ import annotations

import ast
import json

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign import repro as R
from aliasfuzz.campaign.known import KnownBug, load_known
from aliasfuzz.report.upstream import render_draft
from tests.common.repro_cases import ROOT, _seed, meta_v2

B07 = _seed("b07_mutation_through_eval_dropout")  # F.dropout(x, training=False).mul_(2)
DIFFERS = "input x: values differ at [0]: 0 in eager, 0 compiled"
INPUT_DIFFERS = "input x: values differ at [1]: 2 in eager, 1 compiled"


def _dropout_bug() -> KnownBug:
    return next(b for b in load_known(ROOT / "corpus") if b.issue == "pytorch/pytorch#195422")


def _known(meta: dict) -> dict:
    return {**meta, "known": _dropout_bug().to_json(),
            "root": {**meta["root"], "check": "known", "evidence": ["known:pytorch/pytorch#195422"]}}


def _doc(text: str) -> list[str]:
    return (ast.get_docstring(ast.parse(text)) or "").splitlines()


def test_every_known_bug_that_makes_a_finding_known_says_why():
    bugs = load_known(ROOT / "corpus")
    assert [b.issue for b in bugs if not b.related and not b.why] == []
    dropout = _dropout_bug()
    assert "changes x in eager and leaves x unchanged compiled" in dropout.why
    assert dropout.to_json()["why"] == dropout.why and "\n" not in dropout.why


def test_a_known_findings_repro_names_the_issue_then_the_differing_input():
    meta = _known(meta_v2(B07, "aot_eager", "miscompile", "inputs", "decomposition",
                          explanation=INPUT_DIFFERS))
    doc = _doc(R.render_repro(B07, meta))
    bug = _dropout_bug()
    assert doc[0] == f"known upstream: pytorch/pytorch#195422 — {bug.title}"
    assert doc[1] == ("[aot_autograd] decomposition mutates an input differently from eager: "
                      + INPUT_DIFFERS)
    why = " ".join(line for line in doc if line)  # the why, wrapped in the docstring
    assert "Why it is a bug: F.dropout(x, p, training=False) returns x itself in eager" in why
    assert "aliasing" not in doc[1]


def test_a_value_sighting_goes_before_an_aliasing_only_one():
    # the entry's own program differs only in output aliasing; another hit loses the update
    meta = _known(meta_v2(B07, "aot_eager", "miscompile", "aliasing", "decomposition",
                          explanation="out0 aliases x in eager but is fresh compiled"))
    meta["hits"].append({**meta["hits"][0], "check": "inputs", "pipeline": "inductor",
                         "explanation": INPUT_DIFFERS, "program_index": 7})
    p = R.plan(B07, meta)
    assert (p.pipeline, p.check, p.described) == ("inductor", "inputs", False)
    doc = _doc(R.render_repro(B07, meta))
    assert doc[1] == ("[aot_autograd] decomposition mutates an input differently from eager: "
                      + INPUT_DIFFERS)
    md = render_draft(B07, meta)
    assert "mutates an input differently from eager on the program below: " + INPUT_DIFFERS in md


def test_an_aliasing_only_claim_says_that_no_value_differs():
    meta = meta_v2(B07, "aot_eager", "miscompile", "aliasing", "decomposition",
                   explanation="out0 aliases x in eager but is fresh compiled")
    claim = R.title(meta)
    assert claim == ("[aot_autograd] decomposition differs from eager only in which outputs share "
                     "storage (every value agrees): out0 aliases x in eager but is fresh compiled")


def test_the_draft_of_a_known_finding_starts_with_the_issue_and_why():
    meta = _known(meta_v2(B07, "aot_eager", "miscompile", "inputs", "decomposition",
                          explanation=INPUT_DIFFERS))
    md = render_draft(B07, meta)
    head = md.split("### 🐛 Describe the bug", 1)[0]
    bug = _dropout_bug()
    assert f"**known upstream: pytorch/pytorch#195422 — {bug.title}**: {bug.why}" in head
    assert md.splitlines()[0] == "# " + R.title(meta)


def test_a_finding_of_no_known_bug_is_unchanged():
    meta = meta_v2(B07, "aot_eager", "miscompile", "values", "decomposition", explanation=DIFFERS)
    text = R.render_repro(B07, meta)
    assert _doc(text)[0] == R.title(meta)
    assert "known upstream" not in text and "Why it is a bug" not in text
    md = render_draft(B07, meta)
    assert "known upstream" not in md
    assert md.split("\n\n", 1)[1].startswith("<!-- Draft from aliasfuzz entry")
    # a related bug alone does not make it known
    related = {**meta, "related": [{"issue": "pytorch/pytorch#1", "title": "t", "related": True}]}
    assert R.render_repro(B07, related) == text


def test_each_hit_keeps_what_differed_on_it(tmp_path):
    from tests.unit.test_corpus_store import _program

    out = {"verdict": "miscompile", "check": "inputs", "explanation": INPUT_DIFFERS + "\nmore"}
    blame = {"stage": "decomposition", "stages": ["decomposition"]}
    rec = store.record(tmp_path, _program(), _program(), out, "aot_eager", blame, [],
                       {"campaign": "c", "program_index": 0, "seed": 0})
    meta = json.loads((rec.paths[0] / "meta.json").read_text())
    assert meta["hits"][0]["explanation"] == INPUT_DIFFERS
