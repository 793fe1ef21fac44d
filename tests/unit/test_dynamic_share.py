"""``run --dynamic-share`` (issue 15): which programs of a campaign compile with dynamic
shapes, the options they run with on each pipeline, and what their corpus entry records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign import sources
from aliasfuzz.campaign.options import (
    COMPILE_PIPELINES,
    CampaignOptions,
    resume_options,
    task_options,
)
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def test_the_choice_is_a_function_of_seed_and_index_alone():
    a, b = sources.Programs(4, 8, dynamic_share=0.3), sources.Programs(4, 8, dynamic_share=0.3)
    off, on = sources.Programs(4, 8, dynamic_share=0.0), sources.Programs(4, 8, dynamic_share=1.0)
    chosen = []
    for i in range(60):
        p = a[i]
        assert p.dumps() == b[i].dumps()  # deterministic: a resumed campaign draws the same
        assert "dynamic" not in off[i].meta and on[i].meta["dynamic"] is True
        # the ops, inputs and gradient marking of program i do not depend on the share
        assert p == off[i] == on[i] and p.inputs == on[i].inputs
        assert {k: v for k, v in p.meta.items() if k != "dynamic"} == off[i].meta
        chosen.append(bool(p.meta.get("dynamic")))
    assert 8 <= sum(chosen) <= 28, sum(chosen)  # 20 of 60 at seed 4
    # its own stream: another seed chooses other indices, the grad share does not move them
    assert [bool(sources.Programs(5, 8, dynamic_share=0.3)[i].meta.get("dynamic"))
            for i in range(60)] != chosen
    assert [bool(sources.Programs(4, 8, grad_share=0.0, dynamic_share=0.3)[i].meta.get("dynamic"))
            for i in range(60)] == chosen


def test_a_mutant_is_chosen_too(tmp_path):
    found = sources.collect(tmp_path / "corpus")  # the repository's seeds
    assert found
    progs = sources.Programs(7, 8, 1.0, found, dynamic_share=1.0)
    p = progs[0]
    assert p.meta["generator"] == "mutation" and p.meta["dynamic"] is True


def _program(meta: dict | None = None) -> Program:
    return Program((StorageSpec("s0", 16),), (TensorSpec("x", "s0", (4, 4), (4, 1)),),
                   (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)), Op("sin", ("v0",), {}, ("v1",))),
                   ("v1",), meta or {})


def test_a_dynamic_program_runs_dynamic_on_the_torch_compile_pipelines_only():
    from aliasfuzz.passes.pipelines import DYNAMO_BACKENDS

    assert set(COMPILE_PIPELINES) == set(DYNAMO_BACKENDS)
    dyn, static = _program({"dynamic": True}), _program()
    given = {"inductor": {"auto_functionalized_v2": False}}
    assert task_options(given, "inductor", dyn) == {"auto_functionalized_v2": False, "dynamic": True}
    assert task_options(given, "inductor", static) == {"auto_functionalized_v2": False}
    for p in ("aot_eager", "inductor-reinplace", "inductor-noreinplace"):
        assert task_options({}, p, dyn) == {"dynamic": True}
    for p in ("fx-reinplace", "torchscript", "eager", "debug-miscompile"):  # not applicable
        assert task_options({}, p, dyn) == {}
    assert given == {"inductor": {"auto_functionalized_v2": False}}  # not changed in place


def test_the_pool_hands_the_workers_those_options():
    from aliasfuzz.campaign.pool import Pool

    pool = Pool.__new__(Pool)  # no workers: _task only reads the options
    pool.opts = CampaignOptions(programs=1)
    task = pool._task(_program({"dynamic": True}), "aot_eager")
    assert task["options"] == {"dynamic": True}  # the run, shrink steps, confirm and blame
    assert pool._task(_program(), "aot_eager")["options"] == {}


def test_the_option_is_checked_saved_and_kept_on_resume():
    assert CampaignOptions(programs=1).dynamic_share == 0.1
    for bad in (-0.1, 1.5, float("nan"), float("inf")):
        with pytest.raises(InvalidArgument, match="^--dynamic-share must be a share between 0 and 1$"):
            CampaignOptions(programs=1, dynamic_share=bad).validate()
    with pytest.raises(InvalidArgument, match="dynamic_share must be a share between 0 and 1"):
        CampaignOptions(programs=1, dynamic_share="half").validate()  # a config file's value
    saved = CampaignOptions(programs=2, dynamic_share=0.5)
    assert saved.to_json()["dynamic_share"] == 0.5
    assert resume_options(saved, {"programs": 4}).dynamic_share == 0.5
    with pytest.raises(InvalidArgument, match="--dynamic-share cannot change on --resume"):
        resume_options(saved, {"dynamic_share": 0.0})


def test_the_entry_records_it_and_a_static_sighting_is_the_same_root_cause(tmp_path):
    from aliasfuzz.campaign.replay import replay_task

    program = _program({"dynamic": True})
    out = {"verdict": "miscompile", "check": "values", "explanation": "x differs",
           "decision_kinds": []}
    blame = {"stage": "functionalization", "stages": ["functionalization"], "trail": []}

    def record(p, options, index):
        prov = {"campaign": "c", "seed": 0, "program_index": index, "device": "cpu",
                "pipeline_options": options, "shrink_executions": 0}
        return store.record(tmp_path, p, p, out, "aot_eager", blame, [], prov).paths

    (path,) = record(program, {"dynamic": True}, 0)
    meta = json.loads((path / "meta.json").read_text())
    assert meta["pipeline_options"] == {"dynamic": True}
    assert meta["hits"][0]["pipeline_options"] == {"dynamic": True}
    repro = (path / "repro.py").read_text()
    assert 'torch.compile(f, backend="aot_eager", dynamic=True)' in repro
    assert replay_task(store.load_entry(path))["options"] == {"dynamic": True}
    # the same bug seen without dynamic shapes: one more hit of the same entry
    assert record(_program(), {}, 1) == (path,)
    meta = json.loads((path / "meta.json").read_text())
    assert len(meta["hits"]) == 2 and "pipeline_options" not in meta["hits"][1]
    assert "dynamic=True" in (path / "repro.py").read_text()  # still the entry's own sighting


def test_a_repro_of_a_dynamic_hit_compiles_it_dynamic():
    from aliasfuzz.campaign.repro import plan
    from tests.common.repro_cases import meta_v2

    program = _program()
    meta = meta_v2(program, "inductor-reinplace", "miscompile", "values", "functionalization",
                   full="hidden", hits=(("aot_eager", None),))
    assert not plan(program, meta).options.get("dynamic")
    meta["hits"][1]["pipeline_options"] = {"dynamic": True}  # the public sighting was dynamic
    p = plan(program, meta)
    assert (p.pipeline, p.options) == ("aot_eager", {"dynamic": True})


def _scatter_out() -> Program:
    """v0 = x1 - 1; torch.scatter_add(v0, 0, index, v0, out=x1): program 26 of seed 0,
    compiled dynamic and shrunk (its crash is pytorch/pytorch#122773's)."""
    return Program(
        (StorageSpec("s1", 8, dtype="int64", init="randint",
                     init_args={"high": 2, "low": 0, "seed": 197}),),
        (TensorSpec("x1", "s1", (4, 2), (2, 1)),),
        (Op("sub.Scalar", ("x1",), {"other": 1}, ("v0",)),
         Op("scatter_add.out", ("v0", "x1", "v0"),
            {"dim": 0, "index": ((2,), (0,), (0,))}, ("v2",))),
        (),
    )


def test_an_out_op_that_only_dynamic_shapes_crash_is_a_known_bug():
    # a crash that static shapes do not show is still a finding (the compiled call raises
    # where eager runs), and known: its control, the same program static, removes it
    from aliasfuzz.campaign import _judge
    from aliasfuzz.campaign.corpus import roots
    from aliasfuzz.campaign.known import control_candidates, load_known, match

    program = _scatter_out()
    out = _judge.evaluate(program, "aot_eager", "cpu", {"dynamic": True})
    assert (out["verdict"], out["check"]) == ("crash", "exceptions"), out["explanation"]
    assert "making fake tensor call" in out["explanation"]
    assert _judge.evaluate(program, "aot_eager", "cpu", None)["verdict"] == "ok"
    blame = _judge.blame(program, "aot_eager", "cpu", {"dynamic": True}, out)
    assert blame["stage"] == "dynamo", blame["trail"]
    keys, ops = roots(program, out, "aot_eager", blame), {op.op for op in program.body}
    bugs = [b for b in load_known(CORPUS) if b.issue == "pytorch/pytorch#122773"]
    (bug,) = control_candidates(bugs, keys, ops, "aot_eager", out["explanation"])
    control = bug.control_options({"dynamic": True})
    assert control == {"dynamic": False}
    got = _judge.evaluate(program, "aot_eager", "cpu", control)["verdict"]
    said = out["explanation"]
    assert match(bugs, keys[0], ops, {"aot_eager"}, {bug.issue: got}, explanation=said)[0] == bug
    assert match(bugs, keys[0], ops, {"aot_eager"}, {bug.issue: "crash"}, explanation=said)[0] is None


def test_a_size_one_dim_is_specialized_and_the_program_judged_as_any_other():
    # Dynamo specializes sizes 0 and 1 under dynamic=True (a size-1 dim broadcasts): such a
    # dim stays an int in the graph, the others are SymInts; the judge calls the compiled
    # function once per run, so a later guard failure or recompile never reaches a verdict
    import torch

    from aliasfuzz.oracle.judge import judge
    from aliasfuzz.passes.pipelines import PipelineOptions

    program = Program((StorageSpec("s0", 4),), (TensorSpec("x", "s0", (1, 4), (4, 1)),),
                      (Op("sin", ("x",), {}, ("y",)), Op("add_.Scalar", ("y",), {"other": 1.0}, ("z",))),
                      ("y",))
    j = judge(program, "inductor-reinplace", PipelineOptions(dynamic=True))
    assert j.verdict.value == "ok", j.explanation
    (shape,) = [n.meta["val"].shape for n in j.execution.graph_before.graph.nodes
                if n.op == "placeholder" and isinstance(n.meta.get("val"), torch.Tensor)]
    assert shape[0] == 1 and not isinstance(shape[0], torch.SymInt)
    assert isinstance(shape[1], torch.SymInt)


def test_a_resume_flag_that_repeats_the_saved_value_is_no_change(tmp_path, monkeypatch):
    # fresh user 22: `run --resume --corpus <the campaign's own corpus>` was refused
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kc").mkdir()
    saved = CampaignOptions(programs=2, dynamic_share=0.5, corpus=str(tmp_path / "kc"))
    assert resume_options(saved, {"corpus": "kc", "dynamic_share": 0.5}).corpus == saved.corpus
    with pytest.raises(InvalidArgument, match="--corpus cannot change on --resume .*--state"):
        resume_options(saved, {"corpus": str(tmp_path / "other")})


def test_a_fake_tensor_crash_is_titled_and_keyed_by_the_error_dynamo_caught():
    # fresh user 51's B5: the title said "TorchRuntimeError: RuntimeError when making fake
    # tensor call", Dynamo's wrapper; the error it caught was in its message only
    from aliasfuzz.campaign import _judge
    from aliasfuzz.campaign._repro_words import title
    from aliasfuzz.campaign.corpus import roots

    program = _scatter_out()
    out = _judge.evaluate(program, "aot_eager", "cpu", {"dynamic": True})
    blame = _judge.blame(program, "aot_eager", "cpu", {"dynamic": True}, out)
    caught = "RuntimeError: Cannot call numel() on tensor with symbolic sizes/strides"
    assert dict(blame["trail"])["dynamo"].endswith(f" <- {caught})"), blame["trail"]
    (key,) = roots(program, out, "aot_eager", blame)
    assert "raises:RuntimeError: Cannot call numel(*) on tensor with symbolic sizes/strides" \
        in key["evidence"], key
    meta = {"root": key, "trail": blame["trail"], "explanation": out["explanation"],
            "expected": {"pipeline": "aot_eager", "verdict": "crash", "check": out["check"]}}
    said = title(meta)
    assert f"TorchRuntimeError: {caught} (while compiling)" in said, said
    assert "making fake tensor call" not in said
