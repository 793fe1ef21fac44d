"""Gradients as an observable (:mod:`aliasfuzz.fuzz.grads`): the shared loss and backward,
the differential ``grads`` check (tolerances from the fp64 shadow, eager's refusals never
a finding, a compiled backward's refusal a crash), and the generator's ``requires_grad``
share, drawn after the program so that no seed's ops change."""

from __future__ import annotations

import json

import pytest
import torch

from aliasfuzz.fuzz.eager import EagerResult, make_inputs, run_eager
from aliasfuzz.fuzz.grads import backward, grad_exclusion, loss, mark_grad_leaves
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.oracle.differential import differential
from aliasfuzz.oracle.verdict import Verdict


def _grads_check(e: EagerResult, c: EagerResult, names=("x",), shadow=None, no_grads=None):
    return next(ch for ch in differential(e, c, list(names), shadow=shadow, no_grads=no_grads)
                if ch.name == "grads")


def _with_grads(grads, error=None):
    return EagerResult((torch.ones(2),), (torch.zeros(2),), {"out0": ()}, grads=grads,
                       grad_error=error)


def test_backward_is_aligned_with_the_inputs_and_skips_integer_outputs():
    x = torch.arange(3.0).requires_grad_()
    unused = torch.ones(2).requires_grad_()
    k = torch.arange(3)
    outs = ((x * x), k * 2, x.detach() + 1)  # only the first carries a gradient
    assert loss(outs).detach().item() == 5.0
    g = backward(outs, (x, k, unused))
    assert g[1] is None
    torch.testing.assert_close(g[0], 2 * torch.arange(3.0))
    torch.testing.assert_close(g[2], torch.zeros(2))  # allow_unused: zeros, as TorchScript's
    assert backward((k,), (x,)) is None  # no output carries a gradient
    assert backward((x * 2,), (torch.ones(3),)) is None  # no leaf


def test_grads_mismatch_is_a_miscompile_beyond_the_shadows_error():
    e = _with_grads((torch.tensor([1.0, 2.0]),))
    c = _with_grads((torch.tensor([1.0, 2.5]),))
    ch = _grads_check(e, c)
    assert ch.verdict is Verdict.MISCOMPILE
    assert ch.where == "grad of input x" and "[1]" in ch.message


def test_grads_rounding_within_the_shadow_is_not_a_finding():
    # eager is off the fp64 reference by 1e-3 already: a compiled gradient as close is noise
    e = _with_grads((torch.tensor([1.0, 2.001]),))
    c = _with_grads((torch.tensor([1.0, 1.9995]),))
    ref = _with_grads((torch.tensor([1.0, 2.0], dtype=torch.float64),))
    assert _grads_check(e, c).verdict is Verdict.MISCOMPILE  # without a shadow it stands
    assert _grads_check(e, c, shadow=lambda: ref).passed


def test_eagers_backward_raising_is_never_a_finding():
    e = _with_grads(None, error=RuntimeError("derivative not implemented"))
    c = _with_grads((torch.tensor([9.0, 9.0]),))
    ch = _grads_check(e, c)
    assert ch.passed and "eager's backward raises" in ch.message


def test_compiled_backward_raising_is_a_crash():
    e = _with_grads((torch.tensor([1.0, 2.0]),))
    c = _with_grads(None, error=RuntimeError("backward: boom"))
    assert _grads_check(e, c).verdict is Verdict.CRASH


def test_no_grads_reason_and_runs_without_a_backward_skip_the_check():
    e = _with_grads((torch.tensor([1.0, 2.0]),))
    c = _with_grads((torch.tensor([5.0, 2.0]),))
    assert _grads_check(e, c, no_grads="clamp_: ties").passed
    assert _grads_check(e, _with_grads(None)).passed  # a forward-only stage snapshot


def _program(body, outputs, grad=True):
    st = (StorageSpec("s0", 6), StorageSpec("s1", 6))
    ins = (TensorSpec("x", "s0", (6,), (1,), requires_grad=grad), TensorSpec("y", "s1", (6,), (1,)))
    return Program(st, ins, tuple(body), tuple(outputs))


def test_exclusion_follows_the_gradient_only():
    clamp_on_y = _program([Op("clamp_", ("y",), {"min": 1.0}, ("c",)),
                           Op("add", ("x", "c"), {}, ("z",))], ["z"])
    assert grad_exclusion(clamp_on_y) is None  # y carries no gradient into the clamp
    via_x = _program([Op("clone", ("x",), {}, ("a",)), Op("clamp_", ("a",), {"min": 1.0}, ("c",))],
                     ["c"])
    assert grad_exclusion(via_x).startswith("clamp_:")
    assert grad_exclusion(_program(via_x.body, ["c"], grad=False)) is None


def test_marking_only_unwritten_float_inputs():
    p = _program([Op("add_", ("y", "x"), {}, ("w",))], ["w"], grad=False)
    marked = next(m for i in range(200) if (m := mark_grad_leaves(p, 1.0, 0, i)) is not p)
    assert [t.requires_grad for t in marked.inputs] == [True, False]  # y is written
    assert marked.meta["grad"] is True
    res = run_eager(marked, make_inputs(marked))
    assert res.error is None and res.grads is not None and res.grads[1] is None
    assert mark_grad_leaves(p, 0.0, 0, 0) is p


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_share_changes_no_drawn_op(seed):
    # autograd_share=0: the autograd family adds statements to marked programs
    # (tests/unit/test_autograd_rows.py checks it leaves the others alone)
    with_share = generate(60, seed, autograd_share=0.0)
    without = generate(60, seed, grad_share=0.0)
    for a, b in zip(with_share, without, strict=True):
        assert (a.storages, a.body, a.outputs) == (b.storages, b.body, b.outputs)
        assert [(t.name, t.storage, t.shape, t.stride, t.offset) for t in a.inputs] == \
               [(t.name, t.storage, t.shape, t.stride, t.offset) for t in b.inputs]
        assert not any(t.requires_grad for t in b.inputs)
        if not a.meta.get("grad"):  # share 0 or not chosen: the same program, byte for byte
            assert json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)
    assert generate(60, seed, autograd_share=0.0) == with_share  # deterministic per (seed, index)


def test_some_programs_get_leaves_at_the_default_share():
    progs = generate(300, 1)
    marked = [p for p in progs if p.meta.get("grad")]
    assert marked and all(any(t.requires_grad for t in p.inputs) for p in marked)
    assert all(grad_exclusion(p) is None for p in marked)


def test_a_campaigns_grad_share_reaches_its_programs():
    # aliasfuzz run --grad-share: 0 marks nothing, 1 marks every program with an unwritten
    # float input; the ops of program i are the same whatever the share (but the autograd
    # statement a marked program may get: fuzz/_genautograd.py)
    from aliasfuzz.campaign import sources
    from aliasfuzz.campaign.options import CampaignOptions
    from aliasfuzz.errors import InvalidArgument

    off, on = sources.Programs(3, 8, grad_share=0.0), sources.Programs(3, 8, grad_share=1.0)
    marked = 0
    for i in range(40):
        a, b = off[i], on[i]
        assert not any(t.requires_grad for t in a.inputs)
        assert [t.name for t in a.inputs] == [t.name for t in b.inputs]
        if "autograd" in b.meta:  # a marked program may get an autograd statement inserted
            assert [op for op in b.body if op in a.body] == list(a.body)
        else:
            assert a.body == b.body
        marked += any(t.requires_grad for t in b.inputs)
    assert marked >= 5, marked  # 9 of 40: only programs with an unwritten float input
    assert CampaignOptions(programs=1).grad_share == 0.25
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(InvalidArgument, match="--grad-share must be a share between 0 and 1"):
            CampaignOptions(programs=1, grad_share=bad).validate()
