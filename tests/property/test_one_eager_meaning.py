"""Properties of the one-eager-meaning rules, checked against brute force.

* No statement of a validated program writes two overlapping operands, reads an operand
  that partially overlaps a written one, or writes through a self-overlapping view (the
  rules of ``fuzz/validate.py``; launches and control flow are exempt from the first as
  documented). Footprints here are the brute-force byte sets of ``ValueMeta``, independent
  of the numpy answers validation uses.
* ``fuzz/ops/overlap.py`` answers exactly like brute force on random layouts.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aliasfuzz.fuzz.ops.core import OpKind, ValueMeta
from aliasfuzz.fuzz.ops.overlap import overlap, same_layout, self_overlap
from aliasfuzz.fuzz.ops.schema import written_operands
from aliasfuzz.fuzz.strategies import DEFAULT_FAMILIES, programs
from aliasfuzz.fuzz.validate import infer


def _written(step):
    d = step.opdef
    idx = [i for i in written_operands(d, len(step.args)) if step.args[i] is not None]
    if d.writes is not None and len(idx) == 1:
        return [(idx[0], list(d.writes(step.args, step.op.params)))]
    return [(i, [step.args[i]]) for i in idx]


def _bytes(m: ValueMeta) -> set:
    return set(m.byte_footprint())


@given(programs(families=DEFAULT_FAMILIES, max_statements=6, dtypes=("float32", "int64")))
def test_validated_statements_never_overlap_their_written_operands(program):
    for step in infer(program).steps:
        written = _written(step)
        if step.opdef.kind not in (OpKind.TRITON, OpKind.CONTROL):
            for x, (i, wi) in enumerate(written):
                for j, wj in written[x + 1 :]:
                    for p in wi:
                        for q in wj:
                            assert p.storage != q.storage or not _bytes(p) & _bytes(q), (
                                f"statement {step.index} ({step.op.op}) writes arguments {i} "
                                f"and {j}, which overlap"
                            )
        for _, parts in written:
            for w in parts:
                assert len(w.elements()) == w.numel, (step.op.op, "self-overlapping write")
                for j in step.opdef.read_indices(len(step.args)):
                    r = step.args[j]
                    if r is None or r.storage != w.storage or same_layout(r, w):
                        continue
                    assert not _bytes(r) & _bytes(w), (step.op.op, f"reads {j} partially")


_DTYPES = ("float32", "float64", "int16", "int8")


@st.composite
def layouts(draw, storage="s"):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(ndim))
    stride = tuple(draw(st.integers(0, 9)) for _ in range(ndim))
    dtype = draw(st.sampled_from(_DTYPES))
    return ValueMeta(shape, stride, draw(st.integers(0, 12)), dtype, storage, 1 << 12)


@given(layouts(), layouts(), st.booleans())
def test_overlap_answers_like_brute_force(a, b, same_storage):
    if not same_storage:
        b = ValueMeta(b.shape, b.stride, b.offset, b.dtype, "t", b.storage_nbytes)
    ans = overlap(a, b)
    shared = _bytes(a) & _bytes(b) if same_storage else set()
    assert ans.overlaps is (bool(shared))
    if shared:
        assert ans.byte in shared
    assert overlap(a, a).overlaps is (a.numel > 0)


@given(layouts())
def test_self_overlap_answers_like_brute_force(m):
    ans = self_overlap(m)
    assert ans.overlaps is (len(m.elements()) != m.numel)
