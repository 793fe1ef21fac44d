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
        assert res.error is not None  # eager refuses it too


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
