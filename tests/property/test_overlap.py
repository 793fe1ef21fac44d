"""Property tests: the memory model agrees with brute-force byte enumeration.

Random pairs of strided views of one storage (zero and negative strides, ``as_strided``
self-overlap, storage offsets, dtype views with different itemsizes). Each query is checked
on the Z3 path (fast paths bypassed with ``method="z3"``) and on the default path, and every
witness is checked by recomputing its bytes. The ``fuzz`` variants run thousands of pairs
(``pytest -m fuzz``); the default variants a few hundred.
"""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from aliasfuzz.oracle.memory import Coverage, Layout, Status, covers, overlap, self_overlap

CI = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def layouts(draw, storage: str = "s") -> Layout:
    """A small strided view: rank 0-3, sizes 0-4 (rarely up to 9), strides -2..6."""
    ndim = draw(st.integers(0, 3))
    big = draw(st.booleans())
    sizes = tuple(draw(st.integers(0, 9 if big else 4)) for _ in range(ndim))
    strides = tuple(
        draw(st.one_of(st.sampled_from([0, 1]), st.integers(-2, 6))) for _ in range(ndim)
    )
    itemsize = draw(st.sampled_from([1, 2, 4, 8]))
    # keep every element at a non-negative storage position, as PyTorch requires
    neg = sum((s - 1) * -t for s, t in zip(sizes, strides, strict=True) if t < 0 and s > 0)
    offset = neg + draw(st.integers(0, 24))
    return Layout(storage, offset, sizes, strides, itemsize)


def _index_bytes(lay: Layout) -> dict[tuple[int, ...], range]:
    """Brute force: every index tuple and the bytes of its element."""
    out = {}
    for idx in itertools.product(*(range(s) for s in lay.sizes)):
        e = lay.offset + sum(i * t for i, t in zip(idx, lay.strides, strict=True))
        out[idx] = range(e * lay.itemsize, (e + 1) * lay.itemsize)
    return out


def _bytes(lay: Layout) -> set[int]:
    return {b for r in _index_bytes(lay).values() for b in r}


def _brute_overlap(a: Layout, b: Layout) -> bool:
    return bool(_bytes(a) & _bytes(b))


def _brute_self(a: Layout) -> bool:
    seen: set[int] = set()
    for r in _index_bytes(a).values():
        if seen & set(r):
            return True
        seen |= set(r)
    return False


def _check_overlap_witness(a: Layout, b: Layout, w, distinct: bool = False) -> None:
    ra, rb = _index_bytes(a)[w.index_a], _index_bytes(b)[w.index_b]
    assert w.byte in ra and w.byte in rb, (w, ra, rb)
    assert w.element_a * a.itemsize == ra.start and w.element_b * b.itemsize == rb.start
    if distinct:
        assert w.index_a != w.index_b


def _agree_overlap(a: Layout, b: Layout, method: str) -> None:
    got = overlap(a, b, method=method)
    want = _brute_overlap(a, b)
    assert got.status == (Status.OVERLAPS if want else Status.DISJOINT), (a, b, got)
    if want:
        _check_overlap_witness(a, b, got.witness)
    else:
        assert got.witness is None


def _agree_self(a: Layout, method: str) -> None:
    got = self_overlap(a, method=method)
    want = _brute_self(a)
    assert got.status == (Status.OVERLAPS if want else Status.DISJOINT), (a, got)
    if want:
        _check_overlap_witness(a, a, got.witness, distinct=True)


def _agree_covers(a: Layout, b: Layout, method: str) -> None:
    got = covers(a, b, method=method)
    missing = _bytes(b) - _bytes(a)
    assert got.status == (Coverage.NOT_COVERED if missing else Coverage.COVERS), (a, b, got)
    if missing:
        w = got.witness
        assert w.byte in missing and w.byte in _index_bytes(b)[w.index_b], (w, missing)


PINNED = [
    # PyTorch's compute_overlapping_tensors says "disjoint" here: row 0 of b is row 1 of a
    (Layout("s", 0, (4, 4), (9, 1), 4), Layout("s", 9, (4, 4), (9, 1), 4)),
    # zero stride (expand) against a slice
    (Layout("s", 3, (5, 2), (0, 1), 4), Layout("s", 4, (2,), (3,), 4)),
    # dtype views: float64 elements 1..2 against int32 element 5
    (Layout("s", 1, (2,), (1,), 8), Layout("s", 5, (), (), 4)),
    # byte view straddling two int32 elements, and an empty view
    (Layout("s", 7, (2,), (1,), 1), Layout("s", 0, (3, 0), (1, 1), 4)),
    # as_strided overlapping windows (unfold-like)
    (Layout("s", 0, (3, 3), (1, 1), 2), Layout("s", 5, (1,), (1,), 2)),
]


def _pin(test):
    for a, b in PINNED:
        test = example(a, b)(test)
    return test


@CI
@_pin
@given(layouts(), layouts())
def test_z3_overlap_matches_bruteforce(a, b):
    _agree_overlap(a, b, "z3")


@CI
@_pin
@given(layouts(), layouts())
def test_auto_overlap_matches_bruteforce(a, b):
    _agree_overlap(a, b, "auto")


@CI
@given(layouts())
@example(Layout("s", 0, (3, 3), (1, 1), 4))
@example(Layout("s", 2, (4, 1), (0, 5), 8))
def test_self_overlap_matches_bruteforce(a):
    _agree_self(a, "z3")
    _agree_self(a, "auto")


@CI
@_pin
@given(layouts(), layouts())
def test_covers_matches_bruteforce(a, b):
    _agree_covers(a, b, "z3")
    _agree_covers(a, b, "auto")


def test_different_storages_never_overlap():
    a, b = Layout("x", 0, (4,), (1,), 4), Layout("y", 0, (4,), (1,), 4)
    assert _brute_overlap(a, b)  # same bytes, but of different storages
    assert overlap(a, b).status is Status.DISJOINT
    assert overlap(a, b, method="z3").status is Status.DISJOINT


@pytest.mark.fuzz
@FUZZ
@given(layouts(), layouts())
def test_fuzz_overlap_all_paths(a, b):
    _agree_overlap(a, b, "z3")
    _agree_overlap(a, b, "auto")
    _agree_self(a, "z3")
    _agree_self(a, "auto")


@pytest.mark.fuzz
@FUZZ
@given(layouts(), layouts())
def test_fuzz_covers_all_paths(a, b):
    _agree_covers(a, b, "z3")
    _agree_covers(a, b, "auto")


S0, S1 = sympy.symbols("s0 s1", integer=True)
SYM_GUARDS = [S0 >= 3, S1 >= 4]


@st.composite
def symbolic_layouts(draw) -> Layout:
    """Slices of a dynamic (s0, s1) row-major matrix: rows, columns (a fixed or a symbolic
    width), strides 1-2, offsets."""
    offset = draw(st.integers(0, 3)) + draw(st.integers(0, 2)) * S1
    rows = S0 - draw(st.integers(0, 2))
    width = draw(st.one_of(st.integers(1, 3), st.integers(0, 3).map(lambda k: S1 - k)))
    if draw(st.booleans()):
        return Layout("s", offset, (rows, width), (S1, draw(st.integers(1, 2))), 4)
    return Layout("s", offset, (rows,), (S1 * draw(st.integers(1, 2)),), 4)


def _concrete(lay: Layout, env: dict) -> Layout:
    sub = {S0: env["s0"], S1: env["s1"]}
    ints = [int(sympy.sympify(x).subs(sub)) for x in (lay.offset, *lay.sizes, *lay.strides)]
    n = len(lay.sizes)
    return Layout(lay.storage, ints[0], tuple(ints[1 : 1 + n]), tuple(ints[1 + n :]), lay.itemsize)


@settings(CI, max_examples=100)
@given(symbolic_layouts(), symbolic_layouts())
@example(Layout("s", S1 + 1, (S0 - 2, 2), (S1, 1), 4), Layout("s", 2 * S1, (S0 - 1, 1), (S1, 1), 4))
def test_symbolic_overlap_matches_bruteforce_on_samples(a, b):
    _agree_symbolic(a, b)


@pytest.mark.fuzz
@settings(FUZZ, max_examples=2000)
@given(symbolic_layouts(), symbolic_layouts())
def test_fuzz_symbolic_overlap(a, b):
    _agree_symbolic(a, b)


def _agree_symbolic(a: Layout, b: Layout) -> None:
    got = overlap(a, b, guards=SYM_GUARDS, timeout_ms=5000)
    assert got.status is not Status.UNKNOWN, got
    if got.status is Status.OVERLAPS:
        env = got.witness.env
        assert env.get("s0", 3) >= 3 and env.get("s1", 4) >= 4
        env = {"s0": env.get("s0", 3), "s1": env.get("s1", 4)}
        _check_overlap_witness(_concrete(a, env), _concrete(b, env), got.witness)
    else:
        for s0 in (3, 4, 6):
            for s1 in (4, 5, 7, 9):
                env = {"s0": s0, "s1": s1}
                assert not _brute_overlap(_concrete(a, env), _concrete(b, env)), env
