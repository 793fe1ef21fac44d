"""Generated programs holding a ``resize_``, ``resize_as_``, ``set_``, ``set_.storage`` or
``requires_grad_`` statement (fuzz/_genmeta.py) are judged on ``aot_eager`` without an
internal error and without a finding (``aliasfuzz check``'s judging: ``_judge.evaluate``),
except the PyTorch bugs the ``set_`` row found at once (seed 2 of these options; every
other row's sampled programs judge ok), pinned here as findings by index, two of them with
minimal public-API repros as strict xfails:

* **miscompile** (#5, ``x0.set_(x1); x0.add_(1)`` then a write of ``x1``): ``set_`` of a
  graph input that is a *view* keeps the view's stale ``_base`` in eager; Dynamo
  graph-breaks on ``set_`` of a graph input and compiles the rest with ``x0`` and ``x1`` as
  inputs, where AOTAutograd takes ``x0`` for a view of its old base instead of an alias of
  ``x1``, so the two mutations are written back separately and ``x1``'s write-back
  overwrites ``x0``'s ``add_`` (eager: ``[1, 2, 2, ...]``; aot_eager ``[0, 1, 2, ...]``).
  With ``x0`` a base tensor the result is right.
* **crash** (found first on an earlier draw of the generator, kept as a repro:
  ``v0 = x1.zero_(); v0.set_(x0)`` with ``x0`` 3-d, ``x1`` 1-d): ``set_`` reached through an
  in-place result's name (a tensor without a source) is traced rather than graph-broken,
  and building the shape guards indexes the input's old rank: ``IndexError: list index out
  of range`` in ``produce_guards_verbose`` (``torch/fx/experimental/symbolic_shapes.py``).
* #8, #36, #40, #56 (``v0 = x0.unsqueeze(0); v0.index_fill_(...); v0.set_(x0);
  v0.add_(1)``): ``set_`` of a written view of an input to the input's own storage, then a
  write through it: ``RuntimeError: cannot mutate tensors with frozen storage`` while
  tracing. Pinned as crashes until audit 43 judged the same error on
  ``y = x.add_(1); y.set_(x); y.add_(1)`` a deliberate ban (``set__impl`` freezes the old
  storage, here also the new one; PyTorch's own ``test_set__not_allowed``): now
  ``unsupported`` by the ``functionalize-set-frozen-storage`` refusal, pinned here so.
* **miscompile** (#34, #46: the ``aliasing`` check, an output that is ``set_`` to an input
  aliases it in eager and is fresh compiled; not minimized further yet).

The ``aot-set-input-with-other-mutations`` refusal (#3, #27, #57: AOTAutograd's "not
supported today") is ``unsupported``, not a finding.

aot_eager runs functionalization and AOTAutograd with eager kernels; any other finding here
is a modelling bug of the rows (a layout ``infer`` gets wrong) until shown otherwise.
``ALIASFUZZ_METADATA_EXAMPLES`` sets the programs per row (default 2).
"""

from __future__ import annotations

import os

import pytest
import torch

from aliasfuzz.campaign import _judge
from aliasfuzz.fuzz.sample import generate
from tests.common.judged import assert_judged_valid_and_no_finding

_PER_ROW = int(os.environ.get("ALIASFUZZ_METADATA_EXAMPLES", "2"))
_OPTS = dict(families=("view", "inplace", "functional", "out"), max_statements=3,
             dtypes=("float32", "int64"), metadata_share=1.0)
_ALL = [p for p in generate(60, 2, **_OPTS) if "metadata" in p.meta]
#: index -> verdict: the PyTorch bugs of the module docstring
KNOWN = {5: "miscompile", 8: "unsupported", 34: "miscompile", 36: "unsupported", 40: "unsupported",
         46: "miscompile", 56: "unsupported"}


def _sample():
    seen: dict[str, int] = {}
    for p in _ALL:
        row = p.meta["metadata"]
        if p.meta["index"] in KNOWN or seen.get(row, 0) >= _PER_ROW:
            continue
        seen[row] = seen.get(row, 0) + 1
        yield p


@pytest.mark.parametrize("program", list(_sample()), ids=lambda p: f"{p.meta['index']}-{p.meta['metadata']}")
def test_metadata_programs_judge_ok_on_aot_eager(program):
    assert_judged_valid_and_no_finding(program, "aot_eager")


@pytest.mark.parametrize("index", sorted(KNOWN))
def test_known_findings_are_still_found(index):
    """The programs are still judged as pinned (strict: a fix upstream shows here)."""
    (program,) = [p for p in _ALL if p.meta["index"] == index]
    out = _judge.evaluate(program, "aot_eager", "cpu")
    assert out["verdict"] == KNOWN[index], out["explanation"]
    if KNOWN[index] == "unsupported":
        assert out["explanation"].startswith("functionalize-set-frozen-storage: "), out["explanation"]


def _set_then_write(x0, x1):
    x0.set_(x1)
    x0.add_(1)
    x1.clamp_(0, 2)


@pytest.mark.xfail(strict=True, reason="PyTorch: set_ of a view graph input, then writes of both aliases")
def test_repro_set_of_a_view_input():
    torch._dynamo.reset()
    eager = (torch.zeros(32)[:8], torch.arange(6.0))
    _set_then_write(*eager)
    compiled = (torch.zeros(32)[:8], torch.arange(6.0))
    torch.compile(_set_then_write, backend="aot_eager")(*compiled)
    assert torch.equal(eager[1], compiled[1])  # eager [1, 2, 2, 2, 2, 2]; aot_eager [0, 1, 2, ...]


def _set_through_an_inplace_result(x0, x1):
    v0 = x1.zero_()
    return v0.set_(x0)


# torch 2.13 raises the IndexError of produce_guards_verbose itself; 2.11's Dynamo wraps it
@pytest.mark.xfail(strict=True, raises=(IndexError, torch._dynamo.exc.InternalTorchDynamoError),
                   reason="PyTorch: set_ traced on an input changes its rank")
def test_repro_set_through_an_inplace_result():
    torch._dynamo.reset()
    x0 = torch.arange(105.0).as_strided((4, 2, 4), (28, 7, 2), 7)
    torch.compile(_set_through_an_inplace_result, backend="aot_eager")(x0, torch.arange(4.0)[2:3])
