"""Windowed and raw-strided views (``fuzz/ops/windows.py``) against eager PyTorch.

Writes through ``unfold`` windows with gaps change exactly the windows' elements; through
overlapping windows they are rejected by the general ``self-overlapping-write`` rule (and
eager refuses them). ``movedim`` is torch's permutation. ``as_strided_copy`` and
``as_strided_scatter`` read absolute storage positions: outside the layout contract they are
``layout-readout``. Generic per-row checks (layouts, footprints, render vs apply, aliased
arguments, TorchScript) run in ``test_registry.py``.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import make_inputs, run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.validate import infer
from tests.common.validation import rejection_rule


def _program(body, inputs=None, storages=None, outputs=()) -> Program:
    storages = storages or (StorageSpec("s", 12),)
    inputs = inputs or (TensorSpec("x", "s", (12,), (1,)),)
    return Program(tuple(storages), tuple(inputs), tuple(body), tuple(outputs))


def test_write_through_unfold_with_gaps_changes_exactly_the_windows():
    # 12 elements, windows of 2 every 3: elements 0,1, 3,4, 6,7, 9,10 (gaps at 2, 5, 8, 11)
    p = _program([Op("unfold", ("x",), {"dim": 0, "size": 2, "step": 3}, ("w",)),
                  Op("add_.Scalar", ("w",), {"other": 100.0}, ("w2",))], outputs=("w2",))
    typed = infer(p)
    assert typed.values["w"].shape == (4, 2) and typed.values["w"].stride == (3, 1)
    r = run_eager(p)
    assert r.error is None
    changed = (r.inputs_after[0] != torch.arange(12.0)).nonzero().flatten().tolist()
    assert changed == [0, 1, 3, 4, 6, 7, 9, 10]


def test_write_through_overlapping_unfold_is_self_overlapping_write_which_eager_cannot_see():
    body = [Op("unfold", ("x",), {"dim": 0, "size": 3, "step": 2}, ("w",)),
            Op("add_.Scalar", ("w",), {"other": 1.0}, ("w2",))]
    assert rejection_rule(_program(body)) == "self-overlapping-write"
    # eager writes anyway: has_internal_overlap answers TooHard (2) for this layout, so
    # assert_no_internal_overlap lets it through and the result depends on the kernel's order
    w = torch.arange(12.0).unfold(0, 3, 2)
    assert torch._debug_has_internal_overlap(w) == 2


def test_reading_overlapping_windows_is_valid_and_exact():
    p = _program([Op("unfold", ("x",), {"dim": 0, "size": 3, "step": 2}, ("w",)),
                  Op("sum", ("w",), {"dim": 1}, ("s",))], outputs=("s",))
    infer(p)
    (got,) = run_eager(p).outputs
    assert got.tolist() == [3.0, 9.0, 15.0, 21.0, 27.0]


@pytest.mark.parametrize(("src", "dst"), [(0, 2), (2, 0), (-1, 1), ([0, 1], [2, 0]), ([2], [0])])
def test_movedim_layout_is_torchs(src, dst):
    p = Program((StorageSpec("s", 24),), (TensorSpec("x", "s", (2, 3, 4), (12, 4, 1)),),
                (Op("movedim", ("x",), {"source": src, "destination": dst}, ("m",)),), ("m",))
    m = infer(p).values["m"]
    (x,) = make_inputs(p)
    want = x.movedim(src, dst)
    assert (m.shape, m.stride) == (tuple(want.shape), want.stride())


def test_movedim_rejects_repeated_dims_as_torch_does():
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3).movedim([0, 0], [0, 1])
    with pytest.raises(InvalidArgument, match="repeated"):
        infer(_program([Op("movedim", ("x",), {"source": [0, 0], "destination": [0, 1]}, ("m",))],
                       (TensorSpec("x", "s", (2, 3), (3, 1)),)))


def test_as_strided_copy_outside_its_source_or_after_a_write_is_layout_readout():
    half = (TensorSpec("x", "s", (6,), (1,), 0),)
    outside = [Op("as_strided_copy", ("x",), {"size": [2], "stride": [1], "offset": 5}, ("c",))]
    assert rejection_rule(_program(outside, half)) == "layout-readout"
    # after a write, through a view of the input: the absolute offset addresses a storage
    # functionalization replaces
    after = [Op("add_.Scalar", ("x",), {"other": 1.0}, ("x2",)),
             Op("narrow", ("x",), {"dim": 0, "start": 1, "length": 4}, ("n",)),
             Op("as_strided_copy", ("n",), {"size": [2], "stride": [1], "offset": 1}, ("c",))]
    assert rejection_rule(_program(after, half)) == "layout-readout"
    # of the input itself, within its elements and in bounds on a dense copy of it: valid
    # (shared case c01, PyTorch #133512; here x is dense, so compiled code agrees)
    itself = [Op("add_.Scalar", ("x",), {"other": 1.0}, ("x2",)),
              Op("as_strided_copy", ("x",), {"size": [2], "stride": [1], "offset": 0}, ("c",))]
    assert infer(_program(itself, half, outputs=("c",))).values["c"].shape == (2,)
    inside = _program([Op("as_strided_copy", ("x",), {"size": [2, 2], "stride": [1, 2], "offset": 1},
                          ("c",))], half, outputs=("c",))
    assert infer(inside).values["c"].stride == (2, 1)  # fresh and contiguous
    assert run_eager(inside).outputs[0].tolist() == [[1.0, 3.0], [2.0, 4.0]]


def _scatter(x_layout, window, src_shape=(2,)):
    inputs = (TensorSpec("x", "s", *x_layout), TensorSpec("v", "t", src_shape, (1,) * len(src_shape)))
    storages = (StorageSpec("s", 12), StorageSpec("t", 4, init_args={"start": 50.0}))
    return _program([Op("as_strided_scatter", ("x", "v"), window, ("r",))], inputs, storages, ("r",))


def test_as_strided_scatter_within_a_contiguous_input_is_exact():
    p = _scatter(((3, 4), (4, 1), 0), {"size": [2], "stride": [5], "offset": 1})
    infer(p)
    (r,) = run_eager(p).outputs
    want = torch.arange(12.0).view(3, 4)
    want.view(-1)[1], want.view(-1)[6] = 50.0, 51.0
    assert torch.equal(r, want)


@pytest.mark.parametrize(("x_layout", "window"), [
    (((4,), (1,), 2), {"size": [2], "stride": [1], "offset": 2}),  # x not at offset 0
    (((3, 4), (1, 3), 0), {"size": [2], "stride": [1], "offset": 0}),  # x transposed
    (((6,), (1,), 0), {"size": [2], "stride": [1], "offset": 5}),  # window leaves x
])
def test_as_strided_scatter_outside_the_contract_is_layout_readout(x_layout, window):
    assert rejection_rule(_scatter(x_layout, window)) == "layout-readout"


def test_as_strided_scatter_into_an_overlapping_window_is_refused():
    with pytest.raises(InvalidArgument, match="two indices"):
        infer(_scatter(((6,), (1,), 0), {"size": [2], "stride": [0], "offset": 1}))
