"""Unit tests of the memory model: argument checks, exact cases, symbolic layouts, timeouts."""

from __future__ import annotations

import pytest
import sympy
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.oracle import memory
from aliasfuzz.oracle.memory import (
    Coverage,
    Layout,
    Status,
    covers,
    guards_of,
    layout_of,
    overlap,
    self_overlap,
)

s0, s1 = sympy.symbols("s0 s1", integer=True)


def L(offset, sizes, strides, itemsize=4, storage="s"):
    return Layout(storage, offset, sizes, strides, itemsize)


@pytest.mark.parametrize(
    "args",
    [
        ("s", 0, (2, 3), (1,), 4),  # rank mismatch
        ("s", 0, (2,), (1,), 0),  # itemsize
        ("s", 0, (-1,), (1,), 4),  # negative size
        ("s", -2, (2,), (1,), 4),  # negative offset
        ("s", 0, (2.5,), (1,), 4),  # not an integer
        ("s", True, (2,), (1,), 4),  # bool is not a size
    ],
)
def test_layout_rejects_bad_arguments(args):
    with pytest.raises(InvalidArgument):
        Layout(*args)


def test_query_argument_checks():
    a = L(0, (2,), (1,))
    with pytest.raises(InvalidArgument, match="Layout"):
        overlap(a, (0, (2,), (1,)))
    with pytest.raises(InvalidArgument, match="method"):
        overlap(a, a, method="fast")
    with pytest.raises(InvalidArgument, match="timeout"):
        self_overlap(a, timeout_ms=0)
    with pytest.raises(InvalidArgument, match="concrete"):
        overlap(a, L(0, (s0,), (1,)), method="enumerate")


def test_sympy_integers_are_normalized_to_int():
    a = L(sympy.Integer(3), (sympy.Integer(2),), (1,))
    assert a.offset == 3 and type(a.sizes[0]) is int and a.concrete


@pytest.mark.parametrize("method", ["auto", "z3", "enumerate"])
def test_exact_cases(method):
    row = L(0, (4, 4), (9, 1))
    assert overlap(row, L(9, (4, 4), (9, 1)), method=method).status is Status.OVERLAPS
    assert overlap(row, L(22, (4, 4), (9, 1)), method=method).status is Status.DISJOINT
    # interleaved columns of a 4x6 matrix
    even, odd = L(0, (4, 3), (6, 2)), L(1, (4, 3), (6, 2))
    assert overlap(even, odd, method=method).status is Status.DISJOINT
    # float64 element 1 (bytes 8..15) against int32 element 3 (bytes 12..15)
    w = overlap(L(1, (), (), 8), L(3, (), (), 4), method=method).witness
    assert w is not None and 12 <= w.byte < 16 and (w.element_a, w.element_b) == (1, 3)
    # int16 element 7 (bytes 14..15) does not touch int32 element 2 (bytes 8..11)
    assert overlap(L(7, (), (), 2), L(2, (), (), 4), method=method).status is Status.DISJOINT


def test_empty_and_foreign_views_never_overlap():
    a = L(0, (4,), (1,))
    assert overlap(a, L(0, (0, 4), (4, 1))).status is Status.DISJOINT
    assert overlap(a, L(0, (4,), (1,), storage="t")).status is Status.DISJOINT
    assert self_overlap(L(0, (0, 5), (0, 0))).status is Status.DISJOINT


def test_self_overlap_zero_stride_and_windows():
    w = self_overlap(L(2, (3, 2), (0, 1))).witness
    assert w.index_a != w.index_b and w.element_a == w.element_b
    windows = L(0, (3, 3), (1, 1))  # unfold(0, 3, 1) of a 5-vector
    for method in ("auto", "z3"):
        got = self_overlap(windows, method=method)
        assert got.status is Status.OVERLAPS and got.witness.element_a == got.witness.element_b
    assert self_overlap(L(0, (3, 3), (5, 1))).status is Status.DISJOINT


def test_covers_cases():
    full = L(0, (4, 6), (6, 1))
    assert covers(full, L(7, (2, 3), (6, 1))).status is Coverage.COVERS
    miss = covers(L(0, (4, 3), (6, 1)), L(2, (2, 2), (6, 1)))
    assert miss.status is Coverage.NOT_COVERED and miss.witness.element_b == 3
    assert covers(full, L(0, (0,), (1,), storage="t")).status is Coverage.COVERS  # empty b
    assert covers(full, L(0, (1,), (1,), storage="t")).status is Coverage.NOT_COVERED
    # bytes of an int64 element covered by two int32 elements
    assert covers(L(2, (2,), (1,), 4), L(1, (), (), 8)).status is Coverage.COVERS


def test_runs_decide_large_sliced_matrices():
    # blocks of a 1024x1024 matrix: 1024 runs each, decided without Z3
    a, b = L(0, (1024, 512), (1024, 1)), L(512, (1024, 512), (1024, 1))
    assert overlap(a, b).status is Status.DISJOINT and overlap(a, b).reason.startswith("runs")
    got = overlap(a, L(511, (3, 2), (1024, 1)))
    assert got.status is Status.OVERLAPS and got.witness.index_a == (0, 511)
    assert covers(L(0, (1024, 1024), (1, 1024)), b).status is Coverage.COVERS  # transposed
    miss = covers(a, L(500, (4, 20), (1024, 1)))
    assert miss.status is Coverage.NOT_COVERED and miss.witness.index_b == (0, 12)


def test_large_concrete_layouts_use_z3_and_stay_exact():
    n = 2100  # stride-2 rows: 4.4M one-element runs each, beyond the run limits
    assert n * n > memory._memruns.SORT_LIMIT
    even, odd = L(0, (n, n), (2 * n, 2)), L(1, (n, n), (2 * n, 2))
    got = overlap(even, odd)
    assert got.status is Status.DISJOINT and got.reason.startswith("z3")
    shifted = overlap(even, L(2 * n + 2, (n, n), (2 * n, 2)))
    assert (
        shifted.status is Status.OVERLAPS and shifted.witness.element_a == shifted.witness.element_b
    )


def test_symbolic_overlap_under_guards():
    # a[:s0] and a[s0:2*s0] never overlap; with stride 2 the odd/even split neither
    assert (
        overlap(L(0, (s0,), (1,)), L(s0, (s0,), (1,)), guards=[s0 >= 2]).status is Status.DISJOINT
    )
    assert overlap(L(0, (s0,), (2,)), L(1, (s0,), (2,))).status is Status.DISJOINT
    # rows of a (s0, s1) matrix: x[:, :2] vs x[1:, 1:2] share x[1, 1]
    a, b = L(0, (s0, 2), (s1, 1)), L(s1 + 1, (s0 - 1, 1), (s1, 1))
    got = overlap(a, b, guards=[s0 >= 2, s1 >= 3])
    assert got.status is Status.OVERLAPS
    env = got.witness.env
    assert env["s0"] >= 2 and env["s1"] >= 3
    assert got.witness.element_a == env["s1"] * got.witness.index_a[0] + got.witness.index_a[1]


def test_guards_decide_the_answer():
    # b starts at s0; a covers [0, 4): they overlap iff s0 < 4
    a, b = L(0, (4,), (1,)), L(s0, (2,), (1,))
    assert overlap(a, b, guards=[s0 >= 4]).status is Status.DISJOINT
    got = overlap(a, b, guards=[s0 >= 2])
    assert got.status is Status.OVERLAPS and got.witness.env["s0"] in (2, 3)


def test_symbolic_cover_across_storages_depends_on_emptiness():
    other = L(0, (4,), (1,), storage="t")
    miss = covers(other, L(0, (s0, 2), (2, 1)), guards=[s0 >= 0])
    assert miss.status is Coverage.NOT_COVERED and miss.witness.env["s0"] >= 1
    assert covers(other, L(0, (s0,), (1,)), guards=[sympy.Eq(s0, 0)]).status is Coverage.COVERS


def test_symbolic_floor_div_mod_and_pow():
    from torch.utils._sympy.functions import FloorDiv, Mod

    a = L(FloorDiv(s0, 2) * 2 + Mod(s0, 2), (1,), (1,))  # == s0
    b = L(s0, (1,), (1,))
    assert overlap(a, b, guards=[s0 >= 0]).status is Status.OVERLAPS
    assert overlap(L(s0**2, (1,), (1,)), L(0, (s0,), (s0,)), guards=[s0 >= 1]).status is (
        Status.DISJOINT
    )


def test_unsupported_expression_is_unknown():
    got = overlap(L(sympy.sqrt(s0), (1,), (1,)), L(0, (4,), (1,)))
    assert got.status is Status.UNKNOWN and "unsupported" in got.reason
    assert overlap(L(0, (4,), (1,)), L(s0, (1,), (1,)), guards=[sympy.Eq(s0 / 2, 1)]).status is (
        Status.UNKNOWN
    )


def test_tiny_timeout_is_unknown():
    # one element at s0*s1 against one at a large prime: deciding it means factoring
    p = 1_000_000_007 * 998_244_353
    a, b = L(s0 * s1, (1,), (1,)), L(p, (1,), (1,))
    got = overlap(a, b, guards=[s0 >= 2, s1 >= 2, s0 < 10**12, s1 < 10**12], timeout_ms=1)
    assert got.status is Status.UNKNOWN and "unknown" in got.reason


def test_layout_of_real_tensors():
    x = torch.zeros(4, 6)
    a, b = layout_of(x[:, :3]), layout_of(x[1:, 3:])
    assert a.storage == b.storage and (b.offset, b.sizes, b.strides) == (9, (3, 3), (6, 1))
    assert overlap(a, b).status is Status.DISJOINT
    assert layout_of(x.view(torch.int16)).itemsize == 2
    assert overlap(layout_of(x), layout_of(torch.zeros(4, 6))).status is Status.DISJOINT
    with pytest.raises(InvalidArgument):
        layout_of(x.to_sparse())
    with pytest.raises(InvalidArgument):
        layout_of([1, 2])


def test_layout_of_fake_tensors_with_symbolic_shapes():
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic,
        ShapeEnv,
        StatelessSymbolicContext,
    )

    env = ShapeEnv()
    ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * 2)
    t = FakeTensorMode(shape_env=env).from_tensor(
        torch.zeros(5, 7), symbolic_context=ctx, source=ConstantSource("x")
    )
    left, right, wide = t[:, :3], t[1:, 3:], t[1:, 2:]
    lay = layout_of(left)
    assert not lay.concrete and isinstance(lay.strides[0], sympy.Symbol) and lay.strides[1] == 1
    g = guards_of(env)
    assert overlap(lay, layout_of(right), guards=g).status is Status.DISJOINT
    got = overlap(lay, layout_of(wide), guards=g)
    assert got.status is Status.OVERLAPS and got.witness.index_a[1] == 2
    assert covers(layout_of(t), layout_of(t[1:]), guards=g).status is Coverage.COVERS
    assert covers(layout_of(t[1:]), layout_of(t), guards=g).status is Coverage.NOT_COVERED
