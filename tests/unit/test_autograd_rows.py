"""Autograd inside programs (fuzz/ops/autograd.py, fuzz/gradflow.py): ``autograd_grad`` and
the ``no_grad.<row>`` statements; validation accepts exactly what eager runs, on a table of
programs each of which eager either runs or refuses (and the rule that rejects it)."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.fuzz.eager import make_inputs, run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.ops import REGISTRY
from aliasfuzz.fuzz.ops.autograd import NO_GRAD_INNER
from aliasfuzz.fuzz.render import render_module
from aliasfuzz.fuzz.validate import NoEagerMeaning, infer


def _p(*body, outs=("g",), rg=True) -> Program:
    return Program(
        (StorageSpec("s0", 6), StorageSpec("s1", 6, init="randn", init_args={"seed": 1})),
        (TensorSpec("x", "s0", (3, 2), (2, 1), requires_grad=rg), TensorSpec("w", "s1", (3, 2), (2, 1))),
        body, outs)


def _grad(y, x, retain=True, out="g"):
    return Op("autograd_grad", (y, x), {"retain_graph": retain}, (out,))


_MUL = Op("mul", ("x", "w"), {}, ("v0",))
_SIN = Op("sin", ("v0",), {}, ("v1",))
_BUMP_X = Op("no_grad.add_.Scalar", ("x",), {"other": 1.0}, ())

# name -> (program, None when eager runs it, else the rule that rejects it)
CASES = {
    "grad wrt a leaf": (_p(_MUL, _SIN, _grad("v1", "x"), outs=("g", "v1")), None),
    "grad wrt an intermediate, graph freed": (_p(_MUL, _SIN, _grad("v1", "v0", retain=False)), None),
    "grad of a view of an intermediate": (
        _p(_MUL, Op("select", ("v0",), {"dim": 0, "index": 1}, ("v1",)), _grad("v1", "x")), None),
    "grad then a use of it": (
        _p(_MUL, _SIN, _grad("v1", "x"), Op("mul", ("g", "v1"), {}, ("v2",)), outs=("v2",)), None),
    "no_grad write to a leaf, then a read": (
        _p(_BUMP_X, Op("mul", ("x", "w"), {}, ("v1",)), outs=("v1", "x")), None),
    "no_grad setitem into a leaf's row": (
        _p(Op("no_grad.setitem.Scalar", ("x",), {"idx": [0], "value": 2.0}, ()),
           Op("sin", ("x",), {}, ("v1",)), outs=("v1",)), None),
    "grad after a no_grad write that nothing saved": (
        _p(Op("add", ("x", "w"), {}, ("v0",)), _BUMP_X, _grad("v0", "x"), outs=("g", "x")), None),
    "y requires no grad": (_p(Op("sin", ("w",), {}, ("v1",)), _grad("v1", "x")), "autograd-grad"),
    "x not in y's graph": (
        _p(_MUL, Op("sin", ("w",), {}, ("v1",)), Op("add", ("v1", "v0"), {}, ("v2",)), _grad("v1", "x")),
        "autograd-grad"),
    "a saved leaf overwritten under no_grad": (
        _p(Op("sin", ("x",), {}, ("v1",)), _BUMP_X, _grad("v1", "x")), "autograd-grad"),
    "an intermediate rebased by a write": (
        _p(_MUL, _SIN, Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v2",)), _grad("v1", "v0")),
        "autograd-grad"),
    "a second call after a freed graph": (
        _p(_MUL, _SIN, _grad("v1", "x", retain=False, out="g0"), _grad("v1", "x")), "autograd-grad"),
    "in-place on a leaf outside no_grad": (
        _p(Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)), outs=("v0",)), "leaf-inplace"),
    "in-place on a view of a leaf outside no_grad": (
        _p(Op("select", ("x",), {"dim": 0, "index": 0}, ("v0",)),
           Op("mul_.Scalar", ("v0",), {"other": 2.0}, ("v1",)), outs=("x",)), "leaf-inplace"),
    "grad without inputs requiring grad": (_p(_MUL, _SIN, _grad("v1", "x"), rg=False), "autograd-grad"),
    # the statement's own write overwrites what it saved of another operand
    "x.mul_(x) then grad": (
        _p(_MUL, Op("mul_", ("v0", "v0"), {}, ("v1",)), _grad("v1", "x")), "autograd-grad"),
    "scatter_ of a src larger than its index, then grad": (
        _p(Op("clone", ("w",), {}, ("v0",)),
           Op("scatter_", ("v0", "x"), {"dim": 1, "index": [[0]]}, ("v1",)), _grad("v1", "x")),
        "autograd-grad"),
    "scatter_ of a src shaped like its index, then grad": (
        _p(Op("clone", ("w",), {}, ("v0",)), Op("select", ("x",), {"dim": 1, "index": 0}, ("xc",)),
           Op("unsqueeze", ("xc",), {"dim": 1}, ("xs",)),
           Op("scatter_", ("v0", "xs"), {"dim": 1, "index": [[1], [0], [1]]}, ("v1",)),
           _grad("v1", "x")), None),
    # split/chunk/unbind outputs requiring grad (handle_view_on_rebase)
    "a chunk used after a no_grad write to its base": (
        _p(Op("chunk", ("x",), {"chunks": 3, "dim": 0}, ("c0", "c1", "c2")), _BUMP_X,
           Op("sin", ("c0",), {}, ("v1",)), outs=("v1",)), "multi-output-view"),
    "a chunk of an intermediate written in place": (
        _p(_MUL, Op("unbind", ("v0",), {"dim": 0}, ("c0", "c1", "c2")),
           Op("add_.Scalar", ("c1",), {"other": 1.0}, ("v1",)), outs=("v1",)), "multi-output-view"),
    "a view of a chunk returned after a write to the base": (
        _p(_MUL, Op("chunk", ("v0",), {"chunks": 3, "dim": 0}, ("c0", "c1", "c2")),
           Op("select", ("c0",), {"dim": 0, "index": 0}, ("c3",)),
           Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",)), outs=("c3",)), "multi-output-view"),
    "a chunk used before any write": (
        _p(_MUL, Op("chunk", ("v0",), {"chunks": 3, "dim": 0}, ("c0", "c1", "c2")),
           Op("sin", ("c0",), {}, ("v1",)), Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v2",)),
           outs=("v1", "v2")), None),
    # an input that does not require grad, its storage given a gradient through a view
    "grad written through a view of w, then through w": (
        _p(Op("select", ("w",), {"dim": 0, "index": 0}, ("w0",)),
           Op("select", ("x",), {"dim": 0, "index": 0}, ("x0",)),
           Op("add_", ("w0", "x0"), {}, ("v1",)), Op("add_.Scalar", ("w",), {"other": 1.0}, ("v2",)),
           outs=("v2",)), "leaf-inplace"),
    "grad written through w, then through w again": (
        _p(Op("add_", ("w", "x"), {}, ("v1",)), Op("add_.Scalar", ("w",), {"other": 1.0}, ("v2",)),
           outs=("v2",)), None),
    "w[i] += a value requiring grad": (
        _p(Op("setitem_iadd", ("w", "x"), {"idx": ["..."]}, ()), outs=("w",)), "leaf-inplace"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_validation_accepts_exactly_what_eager_runs(name):
    program, rule = CASES[name]
    res = run_eager(program)
    if rule is None:
        infer(program)
        assert res.error is None, res.error
    else:
        with pytest.raises(NoEagerMeaning) as e:
            infer(program)
        assert e.value.rule == rule
        # eager refuses it too: the program, or (a multi-output view returned after a write
        # to its base: its grad_fn is invalid) the backward of the loss that reads it
        assert res.error is not None or (rule == "multi-output-view" and res.grad_error is not None)


def test_loss_refusal_keeps_the_gradient_comparison():
    """The generator's filter: the shared loss's backward after a retain_graph=False call, or
    through a value whose saved tensor a no_grad write overwrote, raises (eager, or a
    compiled pipeline's whole backward node freed by the call); ``loss_refusal`` says so."""
    from aliasfuzz.fuzz.eager import run_eager
    from aliasfuzz.fuzz.gradflow import loss_refusal

    freed = _p(_MUL, _SIN, _grad("v1", "x", retain=False), outs=("g", "v1"))
    saved = _p(Op("sin", ("x",), {}, ("v1",)), _BUMP_X, outs=("v1",))
    for p in (freed, saved):
        assert loss_refusal(p, infer(p).steps) is not None
        res = run_eager(p)
        assert res.error is None and res.grad_error is not None
    ok = CASES["grad wrt an intermediate, graph freed"][0]  # returns the gradient only
    assert loss_refusal(ok, infer(ok).steps) is None
    assert run_eager(ok).grad_error is None


def test_grad_result_is_fresh_contiguous_and_requires_no_grad():
    # x.sum()'s backward is an expanded tensor (stride 0): the row clones it contiguous
    program = _p(_grad("x", "x"), outs=("g",))
    (g,) = run_eager(program).outputs
    assert g.stride() == (2, 1) and not g.requires_grad
    assert torch.equal(g, torch.ones(3, 2))


def test_interpreter_and_rendering_agree():
    from aliasfuzz.fuzz.eager import interpret

    program, _ = CASES["grad then a use of it"]
    (a,) = interpret(program, make_inputs(program))
    (b,) = run_eager(program).outputs
    assert torch.equal(a, b)


def test_no_grad_rows_take_the_inner_rows_schema_and_render_a_with_block():
    from aliasfuzz.fuzz.ops.schema import SCHEMAS

    for inner in NO_GRAD_INNER:
        assert SCHEMAS[f"no_grad.{inner}"] == SCHEMAS[inner]
        assert REGISTRY[f"no_grad.{inner}"].mutates == REGISTRY[inner].mutates
    src = render_module(CASES["no_grad write to a leaf, then a read"][0]).source
    assert "    with torch.no_grad():\n        x.add_(1.0)\n" in src


def test_programs_drawn_without_the_family_are_unchanged():
    """The family draws from its own stream after the marking (fuzz/_genautograd.py): every
    program it leaves alone is the one drawn with ``autograd_share=0``, and one it changes
    is that program with the autograd statement (and its use) inserted and one output
    appended."""
    from aliasfuzz.errors import InvalidArgument
    from aliasfuzz.fuzz.sample import generate

    with_ag, without = generate(300, 0), generate(300, 0, autograd_share=0.0)
    hit = [i for i, p in enumerate(with_ag) if "autograd" in p.meta]
    assert hit and not any("autograd" in p.meta for p in without)
    assert all(with_ag[i] == without[i] for i in range(300) if i not in hit)
    for i in hit:
        a, b = with_ag[i], without[i]
        assert a.inputs == b.inputs and a.outputs[:-1] == b.outputs
        extra = [op for op in a.body if op not in b.body]
        assert [op for op in a.body if op in b.body] == list(b.body)
        assert extra[0].op == a.meta["autograd"]
        # a gradient is returned as is or multiplied by x; a no_grad write is followed by sin
        assert [op.op for op in extra[1:]] in ([], ["mul"]) if extra[0].op == "autograd_grad" \
            else [op.op for op in extra[1:]] == ["sin"]
    with pytest.raises(InvalidArgument, match="autograd_share"):
        generate(1, 0, autograd_share=1.5)
