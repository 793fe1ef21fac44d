"""Generated ``repro.py`` files: public API, short, and they reproduce with torch alone (issue 13).

Each script is rendered by :func:`aliasfuzz.campaign.repro.render_repro` into a temp dir
and run with this interpreter in a subprocess (all at once, to keep the runtime low). The
programs are the seed twins (``corpus/seeds``: the shared cases, whose verdicts on torch
2.13 CPU are known) and entries of ``corpus/``, each with a synthesized ``meta_version: 2``
meta (root stage, ``full``, hits) as a campaign writes it; the ``ok`` and ``REINPLACED``
programs are hand-built here. Fresh campaign entries are run by
``tests/e2e/test_upstream_campaign.py``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from aliasfuzz.campaign import repro as R
from aliasfuzz.campaign._repro_source import storage_source
from aliasfuzz.fuzz.eager import storage_expr
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec

ROOT = Path(__file__).resolve().parents[2]
CORPUS, SEEDS = ROOT / "corpus", ROOT / "corpus" / "seeds"
GPU = torch.cuda.is_available()
NO_GPU = (3, "CANNOT RUN HERE: needs a GPU")

_V2_OPTIONS = {"dynamic": False, "auto_functionalized_v2": True, "inductor_config": {}, "torchscript": {}}


def meta_v2(
    program: Program, pipeline: str, verdict: str, check: str | None, stage: str | None, *,
    full: str | None = None, explanation: str = "", evidence: tuple[str, ...] = (),
    options: dict | None = None, hits: tuple[tuple[str, str | None], ...] = (),
) -> dict:
    """A ``meta_version: 2`` meta as the campaign writes it: the entry's own sighting first
    in ``hits``, then ``hits`` (pipeline, full) on the same program."""
    own = {"pipeline": pipeline, "verdict": verdict, "check": check, "full": full,
           "program": program.to_json(), "campaign": "c", "program_index": 0}
    more = [{**own, "pipeline": p, "full": f, "program_index": k + 1}
            for k, (p, f) in enumerate(hits)]
    return {
        "meta_version": 2, "id": f"{verdict}-{stage}-0123456789",
        "root": {"stage": stage or f"unblamed:{pipeline}", "verdict": verdict,
                 "check": "values" if check == "inputs" else check, "evidence": list(evidence)},
        "stages": [stage] if stage else [], "trail": [], "full": full, "known": None,
        "related": [], "ops": sorted({op.op for op in program.body}),
        "expected": {"pipeline": pipeline, "verdict": verdict, "check": check},
        "explanation": explanation, "diff": "",
        "versions": {"torch": torch.__version__, "triton": "3.7.1", "python": "3.11.7"},
        "device": "cpu", "pipeline_options": {**_V2_OPTIONS, **(options or {})},
        "hits": [own, *more],
    }


def _seed(name: str) -> Program:
    return Program.loads((SEEDS / f"{name}.json").read_text())


def _entry(name: str) -> tuple[Program, dict]:
    d = CORPUS / name
    return Program.loads((d / "program.json").read_text()), json.loads((d / "meta.json").read_text())


def _ok_program() -> Program:
    # y = x.clone(); y.add_(1): nothing aliases an input, every pipeline agrees with eager
    return Program(
        (StorageSpec("s0", 6),),
        (TensorSpec("x0", "s0", (3, 2), (2, 1)),),
        (Op("clone", ("x0",), {}, ("v0",)), Op("add_.Scalar", ("v0",), {"other": 1.0}, ())),
        ("v0",),
    )


def _reinplaced_program() -> Program:
    # index_put on a fresh intermediate: the pass turns it into index_put_ (no copy left)
    return Program(
        (StorageSpec("s0", 6), StorageSpec("s1", 4), StorageSpec("s2", 2, dtype="int64")),
        (
            TensorSpec("x0", "s0", (3, 2), (2, 1)),
            TensorSpec("x1", "s1", (2, 2), (2, 1)),
            TensorSpec("x2", "s2", (2,), (1,)),
        ),
        (
            Op("neg", ("x0",), {}, ("v0",)),
            Op("index_put_.Tensor", ("v0", "x1", "x2"), {}, ("v1",)),
        ),
        ("v0",),
    )


def _overlapping_inputs() -> Program:
    # functorch#950: def f(a, b): a.add_(1); b.mul_(2), called with one tensor twice
    return Program(
        (StorageSpec("s0", 4),),
        (TensorSpec("a", "s0", (4,), (1,)), TensorSpec("b", "s0", (4,), (1,))),
        (Op("add_.Scalar", ("a",), {"other": 1.0}, ("v0",)),
         Op("mul_.Scalar", ("b",), {"other": 2.0}, ("v1",))),
        (),
    )


def _cases() -> dict[str, tuple[Program, dict, tuple[int, str]]]:
    """name -> (program, v2 meta, (exit status, start of the last line))."""
    c: dict[str, tuple[Program, dict, tuple[int, str]]] = {}

    def add(name, program, want, *args, **kw):
        c[name] = (program, meta_v2(program, *args, **kw), want)

    differ = (1, "")
    b01, b03, b05, b07 = (_seed(n) for n in (
        "b01_clone_dropped_custom_op", "b03_scatter_result_overwritten_by_fill",
        "b05_noop_clone_changes_storage_offset", "b07_mutation_through_eval_dropout"))
    add("b01-inductor", b01, differ, "inductor", "miscompile", "inputs", "lowering",
        explanation="input x: values differ at [7]: 0.0 in eager, 1.0 compiled")
    add("b03-inductor", b03, differ, "inductor", "miscompile", "values", "reinplace",
        explanation="out0: values differ at [0, 1]: 1.0 in eager, 0.0 compiled")
    add("b03-fast-reproduces", b03, differ, "inductor-reinplace", "miscompile", "values",
        "reinplace", full="reproduces")
    add("b03-fast-hidden", b03, differ, "inductor-reinplace", "miscompile", "values",
        "reinplace", full="hidden")
    add("b05-inductor", b05, differ, "inductor", "miscompile", "values", "joint:remove_noop_ops",
        explanation="out0: values differ at [0]: 0 in eager, 3 compiled")
    # the fast path hit it first, aot_eager too: the repro takes the aot_eager sighting
    add("b07-aot-eager-sighting", b07, differ, "inductor-reinplace", "miscompile", "values",
        "decomposition", full="unsupported", hits=(("inductor", None), ("aot_eager", None)))
    b19, b20 = _seed("b19_custom_op_on_input_row_v1"), _seed("b20_slice_update_then_index_put_temp")
    add("b19-missed-v1", b19, (1, "auto_functionalized"), "inductor", "missed-reinplace",
        "candidates", "reinplace", evidence=("auto_functionalized:missed",),
        options={"auto_functionalized_v2": False},
        explanation="auto_functionalized (t): no conflicting access; forced in place, 2 runs agree")
    add("b20-missed-scatter", b20, (1, "slice_scatter"), "inductor", "missed-reinplace",
        "candidates", "reinplace", evidence=("scatter:missed",),
        explanation="slice_scatter (input): no conflicting access; forced in place, 2 runs agree")
    add("b20-missed-fast-hidden", b20, (1, "slice_scatter"), "inductor-reinplace",
        "missed-reinplace", "candidates", "reinplace", full="hidden", evidence=("scatter:missed",))
    b23, b25 = _seed("b23_script_rotating_buffers"), _seed("b25_script_copy_into_input_requires_grad")
    add("b23-torchscript", b23, differ, "torchscript", "miscompile", "torchscript", "ts-optimizer",
        explanation="profiling call 0 (profiled): output 0: values differ (max abs diff 4) | "
                    "profiling: miscompile, legacy: miscompile, simple: ok")
    add("b25-torchscript-legacy", b25, differ, "torchscript", "miscompile", "torchscript",
        "ts-optimizer", options={"torchscript": {"profiling_executor": False}},
        explanation="legacy call 0 (optimized): output 0: requires_grad eager False, torchscript "
                    "True; input a after the call: requires_grad eager False, torchscript True")
    add("fx-overlapping-inputs", _overlapping_inputs(), differ, "fx-reinplace", "miscompile",
        "inputs", "functionalization",
        explanation="input a: values differ at [0]: 4.0 in eager, 2.0 compiled")
    prog, m = _entry("crash-torchscript-6d6a4a6b4c")
    add("crash-torchscript", prog, (1, "call 0: TorchScript raised"), "torchscript", "crash",
        "torchscript", None, explanation=m["explanation"])
    for name, pipeline in (("b15_triton_same_tensor_two_mutated_args", "aot_eager"),
                           ("b18_triton_partial_write_offset_view", "inductor")):
        add(name[:3] + "-triton", _seed(name), differ if GPU else NO_GPU, pipeline, "miscompile",
            "values", "functionalization")
    prog, _ = _entry("miscompile-fx-reinplace-2402db9bd1")
    add("fx-triton", prog, differ if GPU else NO_GPU, "fx-reinplace", "miscompile", "inputs",
        "functionalization")
    ok, same = _ok_program(), (0, "eager and")
    for pipeline, stage in (("inductor", "reinplace"), ("aot_eager", "functionalization"),
                            ("fx-reinplace", "reinplace"), ("torchscript", "ts-fuser")):
        add(f"ok-{pipeline}", ok, same, pipeline, "miscompile", "values", stage)
    add("ok-fast-hidden", ok, same, "inductor-reinplace", "miscompile", "values", "reinplace",
        full="hidden")
    add("reinplaced", _reinplaced_program(), (0, "no copy left"), "inductor", "missed-reinplace",
        "candidates", "reinplace", evidence=("index_put:missed",))
    return c


CASES = _cases()
#: the cases whose scripts run (each compiles: about 15 s of CPU); the others only render
RUN = [n for n in CASES if n not in (
    "b03-fast-reproduces", "b20-missed-fast-hidden", "ok-aot_eager", "ok-fast-hidden", "b01-inductor",
)]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, tuple[str, int, str]]:
    """name -> (repro text, exit status, output), four scripts at a time."""
    root = tmp_path_factory.mktemp("repro")
    texts = {name: R.render_repro(program, meta) for name, (program, meta, _) in CASES.items()}
    out: dict[str, tuple[str, int, str]] = {n: (texts[n], -1, "") for n in texts}
    names = RUN
    for k in range(0, len(names), 4):
        procs = {}
        for name in names[k : k + 4]:
            path = root / name / "repro.py"
            path.parent.mkdir()
            path.write_text(texts[name])
            procs[name] = subprocess.Popen(
                [sys.executable, str(path)], cwd=path.parent, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )
        for name, p in procs.items():
            stdout, _ = p.communicate(timeout=300)
            out[name] = (texts[name], p.returncode, stdout)
    return out


@pytest.mark.parametrize("name", RUN)
def test_repro_exits_as_the_finding_says(results, name):
    status, start = CASES[name][2]
    _, rc, out = results[name]
    last = out.strip().splitlines()[-1] if out.strip() else ""
    assert rc == status, out[-3000:]
    assert last.startswith(start) or start in out, out[-3000:]


@pytest.mark.parametrize("name", list(CASES))
def test_repro_is_torch_alone_and_public_ones_are_short(results, name):
    text, _, _ = results[name]
    program, meta, _ = CASES[name]
    tree = ast.parse(text)
    modules = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    modules += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert modules and not any(m.split(".")[0] == "aliasfuzz" for m in modules)
    assert "torch.ops.aliasfuzz" not in text and '"aliasfuzz::' not in text
    plan = R.plan(program, meta)
    if plan.harness:
        assert "HARNESS" in ast.get_docstring(tree)
    else:
        assert len(text.splitlines()) <= R.MAX_LINES, text
        assert "torch._inductor" not in text and "HARNESS" not in text


def test_output_names_what_differs_and_the_versions(results):
    _, _, out = results["b03-inductor"]
    assert out.startswith(f"torch {torch.__version__}") and "outputs differ" in out
    assert "eager:" in out and "compiled:" in out
    _, _, out = results["b25-torchscript-legacy"]
    assert "requires_grad flags differ" in out
    _, _, out = results["b20-missed-scatter"]
    assert "bytes (all of its base) for a" in out  # the cost, in bytes


def test_plan_takes_the_most_public_sighting():
    b07 = _seed("b07_mutation_through_eval_dropout")
    meta = CASES["b07-aot-eager-sighting"][1]
    p = R.plan(b07, meta)
    assert (p.mode, p.backend, p.harness) == ("compile", "aot_eager", "")
    meta = meta_v2(b07, "inductor-reinplace", "miscompile", "values", "decomposition",
                   full="reproduces", hits=(("fx-reinplace", None),))
    assert (R.plan(b07, meta).mode, R.plan(b07, meta).backend) == ("compile", "inductor")
    meta = meta_v2(b07, "inductor-reinplace", "miscompile", "values", "decomposition",
                   full="hidden", hits=(("fx-reinplace", None),))
    assert R.plan(b07, meta).mode == "fx"
    meta = meta_v2(b07, "inductor-reinplace", "miscompile", "values", "decomposition", full="hidden")
    p = R.plan(b07, meta)
    assert p.mode == "fastpath" and "agreed with eager" in p.harness


def test_harness_says_why_in_its_docstring(results):
    doc = ast.get_docstring(ast.parse(results["b03-fast-hidden"][0]))
    assert "HARNESS" in doc and "post-grad passes" in doc
    doc = ast.get_docstring(ast.parse(results["b19-missed-v1"][0]))
    assert "reinplace_inplaceable_ops" in doc


def test_fx_repro_states_the_blamed_stage(results):
    text = results["fx-overlapping-inputs"][0]
    assert "# blamed stage: make_fx(functionalize(f)) alone already departs" in text
    assert "torch.fx.passes.reinplace import reinplace" in text


def test_torchscript_repro_sets_the_blamed_stages_executor(results):
    text = results["b25-torchscript-legacy"][0]
    assert "_jit_set_profiling_executor(False)" in text and "fuser_enabled(False)" in text
    assert "torch.jit.script(f)" in text
    text = results["ok-torchscript"][0]
    assert "_jit_override_can_fuse_on_cpu(True)" in text and "range(3)" in text


def test_title_names_the_stage_and_the_effect():
    meta = CASES["b05-inductor"][1]
    assert R.title(meta).startswith(
        "[inductor] joint-graph pass remove_noop_ops returns wrong values: out0: values differ"
    )
    meta = CASES["fx-overlapping-inputs"][1]
    assert R.title(meta).startswith("[functorch] torch.func.functionalize mutates an input")


def test_program_text_is_the_program_part_of_the_repro(results):
    for name in ("b07-aot-eager-sighting", "fx-triton", "b20-missed-scatter"):
        program, meta, _ = CASES[name]
        text = R.program_text(program, meta)
        assert "def f(" in text and "def inputs():" in text
        assert all(line in results[name][0] for line in text.splitlines())


@pytest.mark.parametrize(
    "spec",
    [
        StorageSpec("s", 7),
        StorageSpec("s", 5, "int64", "arange", {"start": -3, "step": 2}),
        StorageSpec("s", 3000, "float16"),  # past float16's exact integers: the long form
        StorageSpec("s", 300, "int8"),  # wraps: the long form
        StorageSpec("s", 4, "float32", "arange", {"start": 0.5, "step": 0.25}),
        StorageSpec("s", 6, "bool"),
        StorageSpec("s", 5, "float64", "randn", {"seed": 3}),
        StorageSpec("s", 0),
    ],
)
def test_storage_source_builds_the_eager_storage(spec):
    short, long = (eval(e, {"torch": torch}) for e in (storage_source(spec), storage_expr(spec)))  # noqa: S307
    assert short.dtype == long.dtype and torch.equal(short, long)


def test_every_corpus_entry_renders_within_budget_where_public():
    """The corpus's programs under v2 metas of every kind: each renders, and every repro
    without a harness stays within the line budget."""
    rendered = 0
    for d in sorted(p for p in CORPUS.iterdir() if (p / "meta.json").exists()):
        program, old = _entry(d.name)
        e = old["expected"]
        for full in ((None,) if e["pipeline"] != "inductor-reinplace" else ("reproduces", "hidden")):
            meta = meta_v2(program, e["pipeline"], e["verdict"], e["check"], None, full=full,
                           explanation=old.get("explanation", ""))
            text = R.render_repro(program, meta)
            ast.parse(text)
            rendered += 1
            if not R.plan(program, meta).harness:
                assert len(text.splitlines()) <= R.MAX_LINES, d.name
    assert rendered >= 40
