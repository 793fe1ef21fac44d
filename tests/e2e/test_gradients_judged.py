"""Gradients on every ``torch.compile`` pipeline (issue 15): a program whose forward is right
and whose backward is wrong is a ``miscompile`` of check ``grads`` on ``aot_eager``, the
fast path and ``inductor``, and ``ok`` on each without the fault. The fault is the mutant
``bench/mutants/m9_backward_reinplace.py``: in backward graphs only, an op that overwrites a
value a later op reads. A gradient finding's ``repro.py`` runs the backward and exits 1 while
the fault is in place, 0 without it; its blame says why it names no stage."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from aliasfuzz import plugins
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.oracle.judge import judge
from aliasfuzz.oracle.verdict import Verdict
from tests.common.repro_cases import meta_v2

ROOT = Path(__file__).resolve().parents[2]
MUTANT = ROOT / "bench" / "mutants" / "m9_backward_reinplace.py"
PIPELINES = ("aot_eager", "inductor-reinplace", "inductor")

#: tanh(clone(sin(x) * x) + w): d/dx reads the incoming gradient twice (for cos(x) * x and for
#: sin(x)); the forward has nothing a reinplacing fault could break
PROGRAM = Program(
    (StorageSpec("s0", 6, init="linspace", init_args={"start": -1.0, "end": 1.0}),
     StorageSpec("s1", 3, init="ones")),
    (TensorSpec("x", "s0", (2, 3), (3, 1), requires_grad=True), TensorSpec("w", "s1", (3,), (1,))),
    (Op("sin", ("x",), {}, ("a",)), Op("mul", ("a", "x"), {}, ("y",)),
     Op("clone", ("y",), {}, ("z",)), Op("add_", ("z", "w"), {}, ("z2",)),
     Op("tanh", ("z2",), {}, ("t",))),
    ("t",),
)


@pytest.fixture
def mutant():
    plugins.load_plugins([MUTANT])
    yield
    plugins.unload_all()


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_a_backward_only_fault_is_a_grads_miscompile(pipeline, mutant):
    j = judge(PROGRAM, pipeline)
    forward = [(c.name, c.verdict) for c in j.checks if c.name != "grads" and not c.passed]
    assert forward == [], j.explanation  # outputs, inputs, aliasing, requires_grad agree
    assert (j.verdict, j.check) == (Verdict.MISCOMPILE, "grads"), j.explanation
    assert j.explanation.startswith("grad of input x: values differ")


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_without_the_fault_the_gradients_agree(pipeline):
    j = judge(PROGRAM, pipeline)
    assert j.verdict is Verdict.OK, j.explanation
    grads = next(c for c in j.checks if c.name == "grads")
    assert grads.passed and grads.message == ""  # compared, not skipped
    assert j.compiled.grads is not None and j.compiled.grads[0] is not None


def _run(script: Path, plugin: Path | None) -> subprocess.CompletedProcess:
    # the repro is standalone; the fault is put in place the way a campaign worker does
    pre = (f"from aliasfuzz import plugins; plugins.load_plugins([{str(plugin)!r}]); "
           if plugin else "")
    code = f"{pre}import runpy; runpy.run_path({str(script)!r}, run_name='__main__')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_a_gradient_findings_repro_runs_the_backward_and_exits_1(pipeline, tmp_path):
    from aliasfuzz.campaign.repro import render_repro

    meta = meta_v2(PROGRAM, pipeline, "miscompile", "grads", None,
                   explanation="grad of input x: values differ at [0, 0]")
    text = render_repro(PROGRAM, meta)
    assert "torch.autograd.grad(loss, leaves, allow_unused=True)" in text
    assert ".requires_grad_()" in text
    script = tmp_path / "repro.py"
    script.write_text(text)
    shows = _run(script, MUTANT)
    assert shows.returncode == 1, shows.stdout + shows.stderr
    assert "gradients of sum(o.sum()) over the floating outputs differ" in shows.stderr
    fixed = _run(script, None)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_a_gradient_finding_is_blamed_by_cutting_the_backward_graph(pipeline, mutant):
    from aliasfuzz.oracle.blame import blame_program

    # m9 breaks the backward graph after Inductor's reinplace pass, and aot_eager's backward
    # in its no-op compiler (which the functionalization stage runs): every stage's forward
    # agrees with eager, the stage that made the backward wrong departs in its gradients
    b = blame_program(PROGRAM, pipeline, "miscompile", "grads")
    plugins.unload_all()
    want = "functionalization" if pipeline == "aot_eager" else "reinplace"
    assert b.stages == (want,), b.trail
    trail = dict(b.trail)
    assert trail[want].startswith("departs (grads: grad of input x: values differ"), b.trail
    assert trail["dynamo"] == "agrees"
    if pipeline != "aot_eager":
        assert trail["aot"] == "agrees"  # the backward graph before Inductor's passes
    # without the fault every stage agrees: nothing to blame
    clean = blame_program(PROGRAM, pipeline, "miscompile", "grads")
    assert clean.stage is None and all(w == "agrees" for s, w in clean.trail), clean.trail


def test_check_names_the_check_and_writes_a_repro_that_shows_the_fault(tmp_path):
    # fresh user 20: check flagged the gradient, named no check and wrote no repro
    from tests.common.cli import run_cli

    case = ROOT / "bench" / "mutants" / "programs" / "m9_backward_reinplace.py"
    r = run_cli("check", "--plugin", MUTANT, "--pipelines", "aot_eager", "--repro", tmp_path,
                case)
    assert r.returncode == 1, r.stdout + r.stderr
    first, second = r.stdout.splitlines()
    assert first.startswith("aot_eager: miscompile (CONTRADICTS expect: ok) check=grads grad of "
                            "input x: values differ"), r.stdout
    script = tmp_path / "m9_backward_reinplace-aot_eager" / "repro.py"
    assert second == f"repro: {script}"
    assert "aliasfuzz" not in script.read_text().split('"""')[2]  # standalone after its docstring
    shows = _run(script, MUTANT)
    assert shows.returncode == 1, shows.stdout + shows.stderr
    assert "gradients of sum(o.sum()) over the floating outputs differ" in shows.stderr
    fixed = _run(script, None)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    # no finding, no repro
    ok = run_cli("check", "--pipelines", "aot_eager", "--repro", tmp_path / "none", case)
    assert ok.returncode == 0 and "repro" not in ok.stdout, ok.stdout + ok.stderr
    assert not (tmp_path / "none").exists()


def _scatters(x):
    return x[0], torch.slice_scatter(x, x[0:1], dim=0, start=0, end=1)


def test_the_fast_path_compiles_a_backward_whose_reinplace_pass_needs_the_fake_mode():
    # the backward of slice_scatter holds scatters the reinplace pass looks at through
    # FakeTensorUpdater, which reads V's fake mode: compiled lazily at the first backward,
    # outside compile_fx's own V.set_fake_mode, the fast path raised 'NullHandler' object does
    # not support the context manager protocol (a false crash of check grads, seed 101 #38)
    j = judge(_scatters, "inductor-reinplace",
              inputs=lambda: (torch.arange(6.0).reshape(3, 2).requires_grad_(),))
    assert j.verdict is Verdict.OK, j.explanation
    assert j.compiled.grads is not None and j.execution.extra["pass_calls"] == 2  # fw and bw


def _doubled(x):
    return x * 2


def test_no_cost_claim_on_a_run_that_compiled_a_backward():
    # Inductor's cost then counts a backward and a training forward; needed bytes do not
    ok = judge(_doubled, "inductor", inputs=lambda: (torch.arange(4.0),))
    assert ok.cost is not None
    g = judge(_doubled, "inductor", inputs=lambda: (torch.arange(4.0).requires_grad_(),))
    assert g.verdict is Verdict.OK and g.compiled.grads is not None and g.cost is None


def test_a_campaign_files_a_gradient_finding_blamed_with_a_repro_that_shows_it(
        tmp_path, monkeypatch):
    import json

    from aliasfuzz.campaign import _judge
    from aliasfuzz.campaign.driver import run_campaign
    from aliasfuzz.campaign.options import CampaignOptions

    generate = _judge.generate
    monkeypatch.setattr(_judge, "generate",
                        lambda seed, i, m=8, g=None: PROGRAM if i == 0 else generate(seed, i, m, g))
    monkeypatch.setenv(plugins.ENV, str(MUTANT))  # every worker loads the fault
    # mutate=0: program 0 must be the generator's (patched to PROGRAM); at the default
    # share, seed 1's program 0 is a mutant of a seed, which never reaches _judge.generate
    opts = CampaignOptions(programs=1, seed=1, pipelines=("aot_eager", "inductor-reinplace"),
                           workers=1, corpus=str(tmp_path / "corpus"),
                           state=str(tmp_path / "state"), report="none", mutate=0.0)
    res = run_campaign(opts, show=False)
    assert res.status == "done" and res.internal_errors == 0
    # the fault sits in a different stage of each pipeline (the backward graph is cut):
    # aot_eager's no-op compiler, the fast path's reinplace pass; two root causes
    assert sorted(f["pipeline"] for f in res.findings) == ["aot_eager", "inductor-reinplace"]
    stage = {"aot_eager": "functionalization", "inductor-reinplace": "reinplace"}
    for finding in res.findings:
        assert (finding["verdict"], finding["check"]) == ("miscompile", "grads"), finding
        entry = tmp_path / "corpus" / finding["id"]
        meta = json.loads((entry / "meta.json").read_text())
        assert meta["root"]["stage"] == stage[finding["pipeline"]], meta["trail"]
        assert "grads: grad of input" in dict(meta["trail"])[stage[finding["pipeline"]]]
        shrunk = Program.from_json(json.loads((entry / "program.json").read_text()))
        assert any(t.requires_grad for t in shrunk.inputs)  # the shrinker kept the leaf
        assert _run(entry / "repro.py", MUTANT).returncode == 1
        assert _run(entry / "repro.py", None).returncode == 0


def test_fx_reinplace_traces_a_grad_program_forward_only():
    # seed 100 #60 marked: make_fx under grad mode kept storage_layout's result as a constant
    # of another fake mode and torch.fx.passes.reinplace raised "Mixing fake modes NYI"
    from aliasfuzz.fuzz.sample import generate_one

    p = generate_one(100, 60, grad_share=1.0)
    assert any(t.requires_grad for t in p.inputs)
    assert "fz.storage_layout" in {op.op for op in p.body}
    j = judge(p, "fx-reinplace")
    assert j.verdict is Verdict.OK, j.explanation
    assert all(o.requires_grad for o in j.compiled.outputs)  # run under autograd, as eager
