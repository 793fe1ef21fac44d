"""``fx-reinplace`` traces user Triton launches through ``torch.library.wrap_triton``.

``make_fx`` cannot see a raw ``@triton.jit`` launch (``torch/_library/triton.py``); the
pipeline, its blame cuts and its repro spell each launch of a generated program through
``wrap_triton`` (``fuzz/render.py`` ``CAPTURE_TRITON``), so what is judged is what the repro
shows. A hand-written raw launch under ``make_fx`` is still refused
(``tests/unit/test_pipelines_triton.py``). Data: ``tests/data/fx_wrap_triton``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("triton")

from aliasfuzz.campaign.repro import program_text  # noqa: E402
from aliasfuzz.fuzz.eager import make_inputs  # noqa: E402
from aliasfuzz.fuzz.ir import Program  # noqa: E402
from aliasfuzz.fuzz.ops import OpKind, lookup  # noqa: E402
from aliasfuzz.fuzz.render import CAPTURE_TRITON, load_function, render_module  # noqa: E402
from aliasfuzz.fuzz.sample import generate  # noqa: E402
from aliasfuzz.oracle.blame import blame_program  # noqa: E402
from aliasfuzz.oracle.judge import judge  # noqa: E402
from aliasfuzz.oracle.verdict import Verdict  # noqa: E402
from aliasfuzz.passes.pipelines import NON_DYNAMO_TRACING, run_pipeline  # noqa: E402
from tests.common.repro_cases import meta_v2  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "fx_wrap_triton"
#: entry -> the stage its plain-torch reduction departs at (DATA/README.md)
STAGES = {
    "miscompile-reinplace-3712e519e2": "reinplace",
    "miscompile-functionalization-c10211248b": "functionalization",
}


def _program(entry: str) -> Program:
    return Program.loads((DATA / entry / "program.json").read_text())


def _launching(n: int = 40, seed: int = 7) -> list[Program]:
    progs = generate(n, seed, max_statements=4)
    return [p for p in progs if any(lookup(o.op).kind is OpKind.TRITON for o in p.body)]


@pytest.mark.parametrize("entry", sorted(STAGES))
def test_former_fx_findings_on_a_launch_are_findings_blamed_on_their_stage(entry):
    p = _program(entry)
    j = judge(p, "fx-reinplace")
    assert j.verdict is Verdict.MISCOMPILE, j.explanation
    assert j.execution.failure is None, j.execution.failure
    b = blame_program(p, "fx-reinplace", j.verdict.value, j.check)
    assert b.stage == STAGES[entry], b.trail


def test_the_fx_graph_holds_the_kernel():
    p = _program("miscompile-reinplace-3712e519e2")
    ex = run_pipeline("fx-reinplace", p, make_inputs(p, "cpu"))
    assert ex.failure is None, ex.failure
    targets = {str(n.target) for n in ex.graph_before.graph.nodes}
    assert any("triton_kernel_wrapper" in t for t in targets), targets


def test_capture_spelling_changes_only_launches_and_not_eager_values():
    progs = _launching()
    assert progs
    for p in progs:
        raw = render_module(p).source.splitlines()
        wrapped = render_module(p, capture_triton=True).source.splitlines()
        changed = [(a, b) for a, b in zip(raw, wrapped, strict=True) if a != b]
        n_launch = sum(lookup(o.op).kind is OpKind.TRITON for o in p.body)
        assert len(changed) == n_launch
        assert all(b.strip().startswith(f"{CAPTURE_TRITON}(") for _, b in changed), changed
        outs = []
        for capture in (False, True):
            fn, _ = load_function(p, capture_triton=capture)
            ins = make_inputs(p, "cpu")
            out = fn(*ins)
            outs.append((out, ins))
        torch.testing.assert_close(outs[0], outs[1], equal_nan=True)
    assert NON_DYNAMO_TRACING == {"fx-reinplace"}  # torchscript refuses launches as unscriptable


def test_the_fx_repro_spells_the_launch_it_judged():
    p = _program("miscompile-reinplace-3712e519e2")
    fx = program_text(p, meta_v2(p, "fx-reinplace", "miscompile", "values", "reinplace"))
    assert f"{CAPTURE_TRITON}(" in fx
    compiled = program_text(p, meta_v2(p, "aot_eager", "miscompile", "values", "functionalization"))
    assert CAPTURE_TRITON not in compiled  # Dynamo captures the raw launch itself
