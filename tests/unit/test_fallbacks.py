"""In-place ops without an Inductor lowering (``fuzz/ops/fallbacks.py``) against eager.

The family's premise (each op is an Inductor fallback, or decomposes into one), exact results
on integer and floating inputs, what ATen refuses (floating ``gcd_``, bool ``cumsum_``), the
general rules on overlapping operands, and the functional forms' layouts and dtypes. Generic
per-row checks (layouts, footprints, render vs apply, aliased arguments, TorchScript) run in
``test_registry.py``.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.ops import REGISTRY
from aliasfuzz.fuzz.validate import NoEagerMeaning, infer

ROWS = sorted(n for n, d in REGISTRY.items() if d.apply.__module__.endswith(".fallbacks"))


def test_every_op_is_an_inductor_fallback_or_decomposes_into_one():
    from torch._inductor.decomposition import decompositions
    from torch._inductor.lowering import fallbacks

    aten = torch.ops.aten
    assert {n.rstrip("_") for n in ROWS} == {"gcd", "lcm", "digamma", "igamma", "cumsum", "cumprod"}
    for op in (aten.gcd.default, aten.digamma.default, aten.igamma.default, aten.cumsum.default,
               aten.cumprod.default):
        assert op in fallbacks, op
    assert aten.lcm.default in decompositions  # torch._refs.lcm: through torch.gcd


def _program(body, inputs, storages, outputs=()) -> Program:
    return Program(tuple(storages), tuple(inputs), tuple(body), tuple(outputs))


_INTS = (StorageSpec("s", 8, "int64", "values", {"data": [12, 18, 7, 0, 9, 4, 6, 15]}),)


def test_gcd_and_lcm_in_place_are_exact_and_broadcast():
    x, y = TensorSpec("x", "s", (2, 2), (2, 1), 0), TensorSpec("y", "s", (2,), (1,), 4)
    for op, fn in (("gcd_", torch.gcd), ("lcm_", torch.lcm)):
        p = _program([Op(op, ("x", "y"), {}, ("r",))], (x, y), _INTS, ("r",))
        infer(p)
        r = run_eager(p)
        assert r.error is None
        want = fn(torch.tensor([[12, 18], [7, 0]]), torch.tensor([9, 4]))
        assert torch.equal(r.outputs[0], want), op
        assert r.inputs_after[1].tolist() == [9, 4]  # y untouched


def test_gcd_of_floats_is_refused_as_aten_does():
    with pytest.raises(RuntimeError):
        torch.ones(2).gcd_(torch.ones(2))
    p = _program([Op("gcd_", ("x", "x"), {}, ("r",))], (TensorSpec("x", "s", (4,), (1,)),),
                 (StorageSpec("s", 4),))
    with pytest.raises(InvalidArgument, match="integer"):
        infer(p)


def test_an_argument_partially_overlapping_self_is_partial_read_write_overlap():
    x, y = TensorSpec("x", "s", (4,), (1,), 0), TensorSpec("y", "s", (4,), (1,), 2)
    p = _program([Op("gcd_", ("x", "y"), {}, ("r",))], (x, y), _INTS)
    with pytest.raises(NoEagerMeaning) as e:
        infer(p)
    assert e.value.rule == "partial-read-write-overlap"


def test_self_read_and_written_whole_is_defined():
    x = TensorSpec("x", "s", (4,), (1,), 0)
    p = _program([Op("igamma_", ("x", "x"), {}, ("r",))], (x,), (StorageSpec("s", 4, init_args={"start": 1.0}),),
                 ("r",))
    infer(p)
    got = run_eager(p).outputs[0]
    a = torch.arange(1.0, 5.0)
    assert torch.allclose(got, torch.igamma(a, a))


def test_cumsum_in_place_runs_along_dim_and_functional_is_contiguous_int64():
    xt = TensorSpec("x", "s", (2, 4), (1, 2), 0)  # transposed int64
    p = _program([Op("cumsum", ("x",), {"dim": 1}, ("c",)), Op("cumsum_", ("x",), {"dim": 0}, ("x2",))],
                 (xt,), _INTS, ("c", "x2"))
    typed = infer(p)
    assert (typed.values["c"].stride, typed.values["c"].dtype) == ((4, 1), "int64")
    r = run_eager(p)
    base = torch.tensor([12, 18, 7, 0, 9, 4, 6, 15]).as_strided((2, 4), (1, 2))
    assert torch.equal(r.outputs[0], base.cumsum(1))
    assert torch.equal(r.outputs[1], base.clone().cumsum_(0))


def test_cumsum_of_int32_accumulates_in_int64_as_aten_does():
    p = _program([Op("cumprod", ("x",), {"dim": 0}, ("c",))], (TensorSpec("x", "s", (3,), (1,)),),
                 (StorageSpec("s", 3, "int32"),), ("c",))
    assert infer(p).values["c"].dtype == str(torch.arange(3, dtype=torch.int32).cumprod(0).dtype)[6:]


def test_bool_cumsum_in_place_is_refused():
    with pytest.raises(RuntimeError):
        torch.ones(2, dtype=torch.bool).cumsum_(0)
    p = _program([Op("cumsum_", ("x",), {"dim": 0}, ("r",))], (TensorSpec("x", "s", (2,), (1,)),),
                 (StorageSpec("s", 2, "bool", "zeros"),))
    with pytest.raises(InvalidArgument, match="bool"):
        infer(p)
