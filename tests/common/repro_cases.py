"""Corpus-entry programs with ``meta_version: 2`` metas, for the repro and upstream tests.

The programs are the seed twins (``corpus/seeds``: the shared cases, whose verdicts on
torch 2.13 CPU are known), the audited findings (``tests/data/audit``), former entries
that are no longer findings (``tests/data/not_findings``: their difference is still
there) and hand-built ones; each meta is
synthesized as a campaign writes it (root stage, ``full``, hits). :data:`CASES` maps a
name to ``(program, meta, (exit status of repro.py, text its output must hold))``.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from tests.common.audit import program_of

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "corpus" / "seeds"
NOT_FINDINGS = ROOT / "tests" / "data" / "not_findings"
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
        "meta_version": 2,
        "id": f"{verdict}-{(stage or 'unblamed').replace(':', '-').replace('_', '-')}-0123456789",
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
    """A former corpus entry of ``tests/data/not_findings``: program and v1 meta."""
    d = NOT_FINDINGS / name
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


def _noop_clones() -> Program:
    # def f(x): a = x + 1; return a.clone(), a.clone(): remove_noop_ops returns one
    # buffer twice (shared/audit noop-removal-stale-output-storages)
    return Program(
        (StorageSpec("s0", 4),),
        (TensorSpec("x", "s0", (4,), (1,)),),
        (Op("add.Scalar", ("x",), {"other": 1.0}, ("a",)), Op("clone", ("a",), {}, ("b",)),
         Op("clone", ("a",), {}, ("c",))),
        ("b", "c"),
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
        explanation="slice_scatter (input): no conflicting access; forced in place, 2 runs agree; "
        "Inductor's generated code moves 640 bytes per call in 2 kernels, 48 bytes in 1 with the "
        "copy dropped (13.3x); excess 592 bytes for a 320-byte tensor")
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
    # the pipeline's default (profiling) options, the finding seen under the legacy executor
    # (the torchscript pipeline runs the others too): eighth audit 7dd2e95937 exited 0
    add("b25-torchscript-legacy-seen", b25, differ, "torchscript", "miscompile", "torchscript",
        "ts-optimizer",
        explanation="legacy call 0 (optimized): output 0: requires_grad eager False, torchscript "
                    "True; input a after the call: requires_grad eager False, torchscript True")
    add("noop-clones-aliasing", _noop_clones(), (1, "storages shared by outputs differ"),
        "inductor", "miscompile", "aliasing", "post-grad:remove_noop_ops",
        explanation="out0 is fresh in eager but aliases out1 compiled")
    # rendered only: a claim of an unsafe decision, a TorchScript graph invariant
    add("unsafe-claim", b03, differ, "inductor", "unsafe-reinplace", "candidates", "reinplace",
        evidence=("scatter:rule 1",))
    add("ts-invariant", _ok_program(), differ, "torchscript", "invariant", "torchscript",
        "ts-optimizer", explanation="profiling call 2 optimized graph: no_profile_nodes: ...")
    add("fx-overlapping-inputs", _overlapping_inputs(), differ, "fx-reinplace", "miscompile",
        "inputs", "functionalization",
        explanation="input a: values differ at [0]: 4.0 in eager, 2.0 compiled")
    prog, m = _entry("crash-torchscript-6d6a4a6b4c")
    add("crash-torchscript", prog, (1, "call 0: TorchScript raised"), "torchscript", "crash",
        "torchscript", None, explanation=m["explanation"])
    for name, pipeline in (("b15_triton_same_tensor_two_mutated_args", "aot_eager"),
                           ("b18_triton_partial_write_offset_view", "inductor")):
        # b15 returns nothing: the kernel's lost write shows in its input (a repro for a
        # values check compares outputs only, and exited 0 on the H200); b18 returns rows
        add(name[:3] + "-triton", _seed(name), differ if GPU else NO_GPU, pipeline, "miscompile",
            "inputs" if name.startswith("b15") else "values", "functionalization")
    add("fx-triton", program_of("miscompile-fx-reinplace-2402db9bd1"), differ if GPU else NO_GPU, "fx-reinplace", "miscompile", "inputs",
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
