"""Generated programs holding an autograd statement (fuzz/_genautograd.py: ``autograd_grad``
or ``no_grad.<in-place row>``) have one eager meaning and judge without a finding on
``aot_eager``.

* Every program the sampler gives the family validates, runs eagerly without an error, and
  eager's backward of the shared loss runs too (the generator keeps the gradients
  observable: :func:`aliasfuzz.fuzz.gradflow.loss_refusal`); two eager runs agree bit for
  bit, outputs and gradients.
* A few per row are judged on ``aot_eager`` (``aliasfuzz check``'s judging:
  ``_judge.evaluate``). aot_eager runs functionalization and AOTAutograd with eager kernels
  (Dynamo graph-breaks at ``torch.autograd.grad``; ``no_grad`` is traced), so a finding
  here is a modelling bug of the rows until shown otherwise.

``ALIASFUZZ_AUTOGRAD_EXAMPLES`` sets the programs judged per row (default 1).
"""

from __future__ import annotations

import os

import pytest
import torch

from aliasfuzz.campaign import _judge
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.gradflow import loss_refusal
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.fuzz.validate import infer
from aliasfuzz.oracle.verdict import Verdict
from tests.common.judged import assert_judged_valid_and_no_finding

_PER_ROW = int(os.environ.get("ALIASFUZZ_AUTOGRAD_EXAMPLES", "1"))
_OPTS = dict(families=("view", "inplace", "functional"), max_statements=4,
             dtypes=("float32", "float64"), grad_share=1.0, autograd_share=1.0)
_ALL = [p for p in generate(160, 2, **_OPTS) if "autograd" in p.meta]


def _per_row() -> list:
    seen: dict[str, int] = {}
    out = []
    for p in _ALL:
        row = p.meta["autograd"]
        if seen.get(row, 0) < _PER_ROW:
            seen[row] = seen.get(row, 0) + 1
            out.append(p)
    return out


def _equal(x, y) -> bool:
    if x is None or y is None:
        return x is y
    if x.is_floating_point():  # bit for bit, a NaN (digamma's poles) equal to itself
        return x.shape == y.shape and torch.allclose(x, y, rtol=0, atol=0, equal_nan=True)
    return torch.equal(x, y)


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return all(_equal(x, y) for x, y in zip(a, b, strict=True))


def test_the_sample_holds_both_kinds_of_row():
    rows = {p.meta["autograd"] for p in _ALL}
    assert "autograd_grad" in rows and any(r.startswith("no_grad.") for r in rows), rows


@pytest.mark.parametrize("program", _ALL, ids=lambda p: f"{p.meta['index']}-{p.meta['autograd']}")
def test_autograd_programs_have_one_eager_meaning(program):
    typed = infer(program)
    assert loss_refusal(program, typed.steps) is None
    a, b = run_eager(program), run_eager(program)
    assert a.error is None, f"{a.error}\n{program.dumps()}"
    assert a.grad_error is None, f"{a.grad_error}\n{program.dumps()}"
    assert _same(a.outputs, b.outputs) and _same(a.grads, b.grads)


@pytest.mark.parametrize("program", _per_row(), ids=lambda p: f"{p.meta['index']}-{p.meta['autograd']}")
def test_autograd_programs_judge_ok_on_aot_eager(program):
    assert_judged_valid_and_no_finding(program, "aot_eager")


def _first(kind: str):
    return next(p for p in _ALL if p.meta["autograd"].split(".")[0] == kind)


@pytest.mark.parametrize("kind", ["autograd_grad", "no_grad"])
def test_fx_reinplace_and_torchscript_refuse_or_take_the_rows_cleanly(kind):
    """fx-reinplace refuses both rows before tracing (``fx-reinplace-autograd``: make_fx's
    forward-only graph); TorchScript refuses ``autograd_grad`` (``scriptable=False``) and
    scripts ``with torch.no_grad():``. Neither is a finding nor an internal error."""
    program = _first(kind)
    fx = _judge.evaluate(program, "fx-reinplace", "cpu")
    assert fx["verdict"] == Verdict.UNSUPPORTED.value, fx["explanation"]
    assert fx["explanation"].startswith("fx-reinplace-autograd: ")
    ts = _judge.evaluate(program, "torchscript", "cpu")
    if kind == "autograd_grad":
        assert ts["verdict"] == Verdict.UNSUPPORTED.value, ts["explanation"]
        assert ts["explanation"].startswith("torchscript-unscriptable-op: ")
    else:
        assert ts["verdict"] == Verdict.OK.value, ts["explanation"]
