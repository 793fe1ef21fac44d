"""The six named differential checks, their order, tolerances, the fp64 shadow and the
exception policy (:mod:`aliasfuzz.oracle.differential`)."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.oracle.differential import CHECKS, differential
from aliasfuzz.oracle.verdict import Verdict


def _res(outs=(), ins=(), aliases=None, error=None):
    aliases = aliases if aliases is not None else {f"out{i}": () for i in range(len(outs))}
    return EagerResult(tuple(outs), tuple(ins), aliases, error)


def _failed(checks):
    return [(c.name, c.verdict) for c in checks if not c.passed]


def test_checks_run_in_fixed_order_and_pass_on_equal_runs():
    x = torch.arange(4.0)
    checks = differential(_res([x * 2], [x]), _res([x * 2], [x.clone()]), ["x"])
    assert tuple(c.name for c in checks) == CHECKS
    assert _failed(checks) == []


def test_float_tolerance_is_dtype_dependent():
    a = torch.tensor([1.0, 2.0])
    near, far = a + 5e-6, a + 1e-3
    assert _failed(differential(_res([a]), _res([near]), [])) == []
    checks = differential(_res([a]), _res([far]), [])
    assert _failed(checks) == [("values", Verdict.MISCOMPILE)]
    assert "out0" in checks[0].message and "[0]" in checks[0].message


def test_integers_compare_exactly():
    a = torch.tensor([5, 6], dtype=torch.int32)
    assert _failed(differential(_res([a]), _res([a + torch.tensor([0, 1], dtype=torch.int32)]), [])) == [
        ("values", Verdict.MISCOMPILE)
    ]


def test_integer_bits_of_floats_compare_as_floats():
    f = torch.tensor([6561.0, 390625.0])
    g = torch.nextafter(f, torch.tensor(1e9))  # one ulp away
    bits_e, bits_c = f.view(torch.int32), g.view(torch.int32)
    assert not torch.equal(bits_e, bits_c)
    assert _failed(differential(_res([bits_e]), _res([bits_c]), [])) == []


def test_integers_that_differ_only_in_a_nan_payload_of_a_float_view_agree():
    # audit 42, a06083e9e6: an int64 -1 viewed as bfloat16 (0xFFFF, a NaN), then add_(1.0):
    # eager wrote the canonical NaN 0x7FC0 in each lane, the vectorized kernel kept 0xFFFF
    canonical = torch.tensor([0x7FC0] * 4, dtype=torch.int16).view(torch.int64)
    e = torch.cat([canonical, torch.tensor([0, 7])])
    c = torch.tensor([-1, 0, 7])
    assert _failed(differential(_res([], [e]), _res([], [c]), ["x"])) == []
    # both NaN under every float view but neither canonical: an integer difference
    assert _failed(differential(_res([], [torch.tensor([-1])]), _res([], [torch.tensor([-2])]),
                                ["x"])) == [("inputs", Verdict.MISCOMPILE)]
    # a canonical NaN against a number: a difference
    assert _failed(differential(_res([], [e]), _res([], [torch.tensor([5, 0, 7])]),
                                ["x"])) == [("inputs", Verdict.MISCOMPILE)]


@pytest.mark.parametrize(("ref", "expected"), [(1.002, []), (1.0, [("values", Verdict.MISCOMPILE)])])
def test_fp64_shadow_decides_float_mismatches(ref, expected):
    eager, compiled = torch.tensor([1.0]), torch.tensor([1.002])
    shadow = lambda: _res([torch.tensor([ref], dtype=torch.float64)])  # noqa: E731
    assert _failed(differential(_res([eager]), _res([compiled]), [], shadow=shadow)) == expected


def test_inputs_after_the_call():
    x = torch.arange(3.0)
    checks = differential(_res([], [x]), _res([], [x + 1]), ["x"])
    assert _failed(checks) == [("inputs", Verdict.MISCOMPILE)]
    assert "input x" in checks[1].message


def test_output_aliasing_must_match():
    x = torch.arange(3.0)
    eager = _res([x], [x], {"out0": ("x",)})
    fresh = _res([x.clone()], [x], {"out0": ()})
    assert _failed(differential(eager, fresh, ["x"])) == [("aliasing", Verdict.MISCOMPILE)]
    assert _failed(differential(fresh, eager, ["x"])) == [("aliasing", Verdict.MISCOMPILE)]


def test_requires_grad_must_match():
    x = torch.arange(3.0)
    assert _failed(differential(_res([x]), _res([x.clone().requires_grad_()]), [])) == [
        ("requires_grad", Verdict.MISCOMPILE)
    ]


@pytest.mark.parametrize(
    ("eager_err", "compiled_err", "verdict"),
    [(True, True, Verdict.OK), (False, True, Verdict.CRASH), (True, False, Verdict.INVALID_PROGRAM)],
)
def test_exception_policy(eager_err, compiled_err, verdict):
    e = _res(error=RuntimeError("eager") if eager_err else None)
    c = _res(error=ValueError("compiled") if compiled_err else None)
    checks = differential(e, c, [])
    assert checks[-1].name == "exceptions" and checks[-1].verdict is verdict
    assert all(ch.passed for ch in checks[:4])


def test_an_exception_headline_keeps_the_line_a_wrapper_introduces():
    from aliasfuzz.errors import one_line

    wrapped = "backend='backend' raised:\nRuntimeError: as_strided_scatter: out of bounds\n\nmore"
    assert one_line(RuntimeError(wrapped)) == (
        "RuntimeError: backend='backend' raised: RuntimeError: as_strided_scatter: out of bounds"
    )
    assert one_line(ValueError("shape '[5]' is invalid\ndetails")) == (
        "ValueError: shape '[5]' is invalid"
    )
    assert one_line(ValueError("alpha beta gamma delta"), 15) == "ValueError: alpha beta..."
    assert one_line(KeyError()) == "KeyError: "


def test_a_float32_mismatch_is_said_in_float32_digits_not_float64_s():
    # fresh user 49's B12: "3.3619375228881836 in eager, 1.361937403678894 compiled"
    e = torch.tensor([1.0, 3.3619375228881836])
    c = torch.tensor([1.0, 1.361937403678894])
    said = differential(_res((e,)), _res((c,)), ["x"])[0].message
    assert said.endswith("values differ at [1]: 3.3619375 in eager, 1.3619374 compiled"), said
    # float64 keeps every digit it needs; integers stay integers
    said = differential(_res((e.double(),)), _res((c.double(),)), ["x"])[0].message
    assert "3.3619375228881836 in eager" in said, said
    said = differential(_res((torch.tensor([7, 8]),)), _res((torch.tensor([7, 9]),)), ["x"])[0].message
    assert said.endswith("8 in eager, 9 compiled"), said


def test_integers_of_any_layout_are_compared_without_an_internal_error():
    # campaign 53, program 300: a one-element int32 output of stride 3 is contiguous, so
    # contiguous().view(-1) kept the stride and view(torch.uint8) raised in the oracle
    from aliasfuzz.oracle.differential import _nan_bits_only

    def odd(v: int) -> torch.Tensor:
        return torch.empty_strided((1,), (3,), dtype=torch.int32).fill_(v)

    assert not _nan_bits_only(odd(5), odd(6))
    assert _nan_bits_only(odd(0x7FC00000), odd(0x7FC00001))  # NaN payloads of float32 bits
