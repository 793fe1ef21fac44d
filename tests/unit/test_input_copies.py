"""Every place that copies or converts a program's inputs keeps their layout and aliasing.

One test per place (issue 12, "the fp64 shadow keeps layouts"): the fp64 shadow
(``differential.shadow_inputs``), ``fuzz.eager.clone_inputs``, ``confirm.input_variants``,
``judge(..., inputs=<tuple>)``, the TorchScript calls (``run_torchscript`` with given
inputs), the generated ``repro.py``'s ``make_inputs`` and the case files' path (c01, public
report #133512). Each uses non-dense inputs: a stride-3 view with a storage offset, a second
input overlapping it on the same storage, a ``requires_grad`` leaf with an offset, and an
integer input.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from aliasfuzz.fuzz.eager import clone_inputs, make_inputs
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.oracle.differential import shadow_inputs

CASES = Path(__file__).resolve().parents[3] / "shared" / "cases"


def _program(body=(), outputs=()) -> Program:
    return Program(
        (
            StorageSpec("s0", 12),
            StorageSpec("s1", 5, dtype="float64", init="randn", init_args={"seed": 3}),
            StorageSpec("s2", 4, dtype="int64"),
        ),
        (
            TensorSpec("x", "s0", (2, 2), (3, 6), 1),  # strided, offset
            TensorSpec("y", "s0", (3,), (2,), 2),  # overlaps x on s0
            TensorSpec("w", "s1", (2,), (2,), 1, requires_grad=True),
            TensorSpec("k", "s2", (2,), (2,), 0),
        ),
        tuple(body),
        tuple(outputs),
    )


def _layout(t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.untyped_storage().nbytes() // t.element_size())


def _sharing(ts) -> list[list[int]]:
    groups: dict[int, list[int]] = {}
    for i, t in enumerate(ts):
        groups.setdefault(t.untyped_storage().data_ptr(), []).append(i)
    return sorted(groups.values())


def _assert_kept(orig, copy, *, dtype=None):
    assert len(orig) == len(copy)
    for o, c in zip(orig, copy, strict=True):
        assert _layout(c) == _layout(o)
        assert c.requires_grad == o.requires_grad and (not c.requires_grad or c.is_leaf)
        want = o.detach().to(dtype) if dtype is not None and o.is_floating_point() else o.detach()
        assert c.dtype == want.dtype and torch.equal(c.detach(), want)
        assert c.untyped_storage().data_ptr() != o.untyped_storage().data_ptr()
    assert _sharing(copy) == _sharing(orig)


def test_shadow_inputs_keep_layout_and_aliasing_over_an_upcast_storage():
    ins = make_inputs(_program())
    sh = shadow_inputs(ins)
    _assert_kept(ins[:3], sh[:3], dtype=torch.float64)
    assert sh[3] is ins[3]  # integers pass through untouched
    # the whole storage is upcast, not just the viewed elements
    base = torch.empty(0, dtype=torch.float64).set_(sh[0].untyped_storage())
    assert torch.equal(base, torch.arange(12.0, dtype=torch.float64))
    # aliasing is kept: x[1, 0] and y[1] are both element 4 of s0
    sh[0][1, 0].fill_(100.0)
    assert sh[1][1] == 100.0 and base[4] == 100.0


def test_shadow_inputs_refuse_a_storage_viewed_with_two_dtypes():
    s = torch.arange(4.0)
    assert shadow_inputs((s, s.view(torch.int32))) is None
    assert shadow_inputs((s, s.view(torch.float16))) is None


def test_clone_inputs_keep_layout_and_aliasing():
    ins = make_inputs(_program())
    _assert_kept(ins, clone_inputs(ins))


def test_confirmation_input_variants_keep_layout_and_aliasing():
    from aliasfuzz.oracle.confirm import input_variants

    p = _program()
    fresh = make_inputs(p)
    variants = input_variants(lambda: make_inputs(p), 2, witness_byte=4 * 7)
    assert len(variants) == 4
    for v in variants:
        for o, c in zip(fresh, v, strict=True):
            assert _layout(c) == _layout(o) and c.requires_grad == o.requires_grad
        assert _sharing(v) == _sharing(fresh)
    # the random refills rewrite whole storages, seen through both aliased views
    s = torch.empty(0).set_(variants[1][0].untyped_storage())
    assert torch.equal(variants[1][1], s[2:8:2]) and not torch.equal(s, torch.arange(12.0))
    assert torch.empty(0).set_(variants[3][0].untyped_storage())[7] == 1e4


def test_judge_with_an_input_tuple_copies_it_layout_preservingly():
    from aliasfuzz.oracle.judge import judge

    def f(x, y, w, k):
        # reads x through its own strides, as as_strided_copy does in eager
        return torch.as_strided_copy(x, (2,), (3,)) + y.sum(), w * 2, k + 1

    ins = make_inputs(_program())
    j = judge(f, "aot_eager", inputs=ins)
    assert j.eager.error is None, j.eager.error
    assert torch.equal(j.eager.outputs[0], torch.tensor([1.0, 4.0]) + (2.0 + 4.0 + 6.0))
    assert j.verdict.value == "ok", j.explanation
    assert _layout(ins[0]) == ((2, 2), (3, 6), 1, 12)  # the caller's tensors are untouched


def test_torchscript_calls_see_the_callers_layouts():
    from aliasfuzz.passes.torchscript import run_torchscript

    p = _program(
        [Op("fz.storage_layout", ("x",), {}, ("l",)), Op("fz.strides_of", ("y",), {}, ("st",))],
        ["l", "st"],
    )
    ex = run_torchscript(p, make_inputs(p), options={"grads": False})
    assert ex.failure is None, ex.failure
    calls = ex.extra["calls"]
    assert len(calls) >= 2 and all(not r.mismatches for r in calls)
    for r in calls:  # the copies each call gets are laid out as the caller's inputs
        assert r.result.outputs[0].tolist() == [1, 12] and r.result.outputs[1].tolist() == [2]


def test_repro_make_inputs_keeps_layout_and_aliasing():
    from aliasfuzz.campaign.repro import program_text

    p = _program()
    namespace: dict = {}
    exec(program_text(p, {"device": "cpu"}), namespace)  # noqa: S102 - our own rendering
    got, want = namespace["inputs"](), make_inputs(p)
    for g, w in zip(got, want, strict=True):
        assert _layout(g) == _layout(w) and g.requires_grad == w.requires_grad
        assert torch.equal(g.detach(), w.detach())
    assert _sharing(got) == _sharing(want)


@pytest.mark.skipif(not CASES.is_dir(), reason="shared/cases is not checked out")
@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor"])
def test_case_c01_is_a_miscompile_because_the_shadow_keeps_the_stride(pipeline):
    # PyTorch #133512: both pipelines return 0, 18 instead of 0, 6. A shadow built with
    # .to(torch.float64) made the stride-3 input contiguous and excused the mismatch.
    from aliasfuzz.oracle.cases import judge_case

    (path,) = CASES.glob("c01_*.py")
    (row,) = judge_case(path, [pipeline])
    assert (row["verdict"], row["expected"]) == ("miscompile", "miscompile"), row["explanation"]
    assert "6.0 in eager, 18.0 compiled" in row["explanation"]
