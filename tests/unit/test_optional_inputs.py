"""Optional inputs: the ``None``-accepting row, the toggled form, the generator that adds
them (:mod:`aliasfuzz.fuzz._genoptional`), the gradient marking of both forms, and the
``torchscript`` pipeline reaching the None-vs-tensor and ``requires_grad`` seams through
:func:`~aliasfuzz.passes.pipelines.run_pipeline` (the campaign's path), not only through
``run_torchscript`` on fresh inputs.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import make_inputs, run_eager
from aliasfuzz.fuzz.grads import mark_grad_leaves
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.optional import toggleable, toggled
from aliasfuzz.fuzz.sample import generate, generate_one
from aliasfuzz.fuzz.validate import infer
from aliasfuzz.passes.pipelines import PipelineOptions, run_pipeline


def _residual(none: bool, *, write: bool = False, grad: bool = False) -> Program:
    """``v = x if o is None else x + o`` (then ``v += 1`` with ``write``), returning ``v``."""
    body = [Op("optional_add", ("x", "o"), {}, ("v",))]
    if write:
        body.append(Op("add_.Scalar", ("v",), {"other": 1.0}, ("w",)))
    return Program(
        storages=(StorageSpec("sx", 6, init="randn", init_args={"seed": 1}), StorageSpec("so", 3)),
        inputs=(TensorSpec("x", "sx", (2, 3), (3, 1), requires_grad=grad),
                TensorSpec("o", "so", (3,), (1,), optional=True, none=none)),
        body=tuple(body),
        outputs=("v",),
    )


def test_optional_add_aliases_x_for_none_and_is_fresh_for_a_tensor():
    typed = infer(_residual(True))
    assert typed.values["v"] == typed.values["x"]  # x itself: an alias
    typed = infer(_residual(False))
    assert typed.values["v"].storage == "v" and typed.values["v"].shape == (2, 3)
    with pytest.raises(InvalidArgument, match="first argument may not be None"):
        infer(Program(_residual(True).storages, _residual(True).inputs[::-1],
                      (Op("optional_add", ("o", "x"), {}, ("v",)),), ("v",)))
    x = make_inputs(_residual(True))[0]
    res = run_eager(_residual(True), (x, None))
    assert res.outputs[0] is x and res.aliases == {"out0": ("x",)}
    res = run_eager(_residual(False))
    assert res.aliases == {"out0": ()}
    assert torch.equal(res.outputs[0], res.inputs_after[0] + torch.arange(3.0))


def test_only_inputs_that_none_accepting_rows_alone_read_are_toggleable():
    p = _residual(True)
    assert toggleable(p) == ("o",)
    q = toggled(p)
    assert [t.none for t in q.inputs] == [False, False] and toggled(q) == p
    returned = p.with_body(p.body, ("v", "o"))
    assert toggleable(returned) == () and toggled(returned) is None
    read = _residual(False).with_body((*p.body, Op("add", ("x", "o"), {}, ("s",))))
    assert toggleable(read) == ()


def _optional_programs(n: int, seed: int, **opts) -> list[Program]:
    return [p for p in generate(n, seed, optional_share=1.0, **opts) if "optional" in p.meta]


def test_generated_programs_validate_and_run_in_both_forms():
    progs = _optional_programs(60, 4)
    assert len(progs) >= 50
    assert {any(t.none for t in p.inputs) for p in progs} == {True, False}
    assert any(op.op == "add_.Scalar" and op.args[0] in {o for b in p.body for o in b.out
                                                           if b.op == "optional_add"}
               for p in progs for op in p.body)
    for p in progs[:30]:
        other = toggled(p)
        assert other is not None and len(toggleable(p)) == 1, p.dumps()
        for form in (p, other):
            infer(form)
            assert run_eager(form).error is None, form.dumps()


def test_default_share_reaches_the_coverage_target_and_leaves_other_programs_alone():
    with_opt = generate(300, 0)
    without = generate(300, 0, optional_share=0.0)
    hit = [i for i, p in enumerate(with_opt) if "optional" in p.meta]
    assert len(hit) >= 0.02 * 300
    # byte for byte: the serialized programs, not only equal dataclasses
    assert all(with_opt[i].dumps() == without[i].dumps() for i in range(300) if i not in hit)
    assert generate_one(0, hit[0]) == with_opt[hit[0]]  # deterministic per (seed, index)
    with pytest.raises(InvalidArgument, match="optional_share"):
        generate(1, 0, optional_share=-0.1)
    assert not _optional_programs(20, 0, families=("view", "inplace"))


def test_grad_leaves_avoid_storages_the_toggled_form_writes():
    # with a tensor o, v is fresh and v += 1 leaves x alone; with None, v is x and the write
    # lands on x, which eager refuses for a leaf requiring grad: x must not be marked
    p = mark_grad_leaves(_residual(False, write=True), 1.0, 0, 0)
    assert [t.requires_grad for t in p.inputs] == [False, True]  # o alone
    other = toggled(p)
    assert run_eager(other).error is None and run_eager(p).error is None
    q = _residual(False)
    marked = mark_grad_leaves(q, 1.0, 0, 0)
    assert [t.requires_grad for t in marked.inputs] == [True, True]
    # the None input loses requires_grad in the toggled form, never gains it
    assert [t.requires_grad for t in toggled(marked).inputs] == [True, False]


def _run(p: Program, **ts) -> list:
    opts = PipelineOptions(torchscript={"calls": 4, "other_executors": False, **ts})
    ex = run_pipeline("torchscript", p, make_inputs(p), "cpu", opts)
    assert ex.failure is None, ex.failure
    return ex.extra["calls"]


def test_run_pipeline_toggles_optional_inputs_and_drops_grad_last():
    calls = _run(_residual(True, grad=True))
    assert [r.result.inputs_after[1] is None for r in calls] == [True, False, True, False]
    assert [r.result.inputs_after[0].requires_grad for r in calls] == [True, True, True, False]
    assert [r.mismatches for r in calls] == [[]] * 4 and not any(r.error for r in calls)
    calls = _run(_residual(False), toggle_optional=False, drop_grad_last=False)
    assert [r.result.inputs_after[1] is None for r in calls] == [False] * 4
