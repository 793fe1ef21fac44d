"""The metadata rows drawn on their own stream (fuzz/ops/metadata.py, fuzz/_genmeta.py):
``resize_``, ``resize_as_``, ``set_``, ``set_.storage`` and ``requires_grad_``.

Each row's ``infer`` against eager on several layouts (the layout after the call, the
storage it is on, the same object returned), the refusals (what eager refuses or leaves
undefined: growing a storage, another dtype, out of bounds, a leaf requiring grad changed
in place), the ``layout-readout`` rule for the absolute layouts of ``resize_`` and
``set_.storage``, and the generator: its own stream leaves every other program of a seed
as it was, and the programs holding a row run eagerly with one meaning.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.grads import grad_exclusion
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.layout_contract import LAYOUT_READOUT
from aliasfuzz.fuzz.ops import REGISTRY, ValueMeta
from aliasfuzz.fuzz.ops.core import NoEagerMeaning
from aliasfuzz.fuzz.sample import generate, generate_one
from aliasfuzz.fuzz.validate import infer
from aliasfuzz.oracle.opinions import deterministic_one_thread
from tests.common.validation import run_unchecked

NUMEL = 64
# (shape, stride, offset) on a float32 storage of NUMEL elements
LAYOUTS = {
    "contiguous": ((2, 3, 4), (12, 4, 1), 0),
    "permuted": ((4, 3, 2), (1, 4, 12), 0),
    "stepped_offset": ((2, 3, 2), (24, 8, 2), 1),
    "expanded": ((2, 3, 4), (0, 4, 1), 2),
    "matrix_t": ((3, 4), (1, 3), 2),
    "empty": ((0, 3), (3, 1), 5),
}
SIZES = ([3, 4], [24], [5], [0], [], [2, 1, 2])


def _tensor(layout, base=None):
    shape, stride, offset = LAYOUTS[layout]
    base = torch.arange(NUMEL, dtype=torch.float32) if base is None else base
    return base, base.as_strided(shape, stride, offset)


def _meta(layout, storage="s"):
    shape, stride, offset = LAYOUTS[layout]
    return ValueMeta(shape, stride, offset, "float32", storage, NUMEL * 4)


def _same(meta: ValueMeta, t: torch.Tensor) -> bool:
    return (meta.shape, meta.stride, meta.offset) == (tuple(t.shape), t.stride(), t.storage_offset())


@pytest.mark.parametrize(("layout", "size"), list(itertools.product(LAYOUTS, SIZES)))
def test_resize_and_resize_as_relay_the_object_as_eager_does(layout, size):
    _, x = _tensor(layout)
    (got,) = REGISTRY["resize_"].infer([_meta(layout)], {"size": size}, ["r"])
    assert x.resize_(size) is x and _same(got, x) and got.storage == "s"
    _, x = _tensor(layout)
    template = _meta("contiguous", "t").view(size, [1] * len(size), 0)
    (got2,) = REGISTRY["resize_as_"].infer([_meta(layout), template], {}, ["r"])
    # a transposed template: its strides are not read
    assert x.resize_as_(torch.empty(size[::-1]).t() if len(size) == 2 else torch.empty(size)) is x
    assert got2 == got and _same(got2, x)


def test_resize_to_its_own_sizes_keeps_the_strides():
    _, x = _tensor("permuted")
    (got,) = REGISTRY["resize_"].infer([_meta("permuted")], {"size": [4, 3, 2]}, ["r"])
    assert x.resize_(4, 3, 2).stride() == (1, 4, 12) == got.stride


def test_resize_past_the_storage_is_refused_and_eager_grows_it():
    m = _meta("stepped_offset")
    with pytest.raises(InvalidArgument, match="uninitialised"):
        REGISTRY["resize_"].infer([m], {"size": [NUMEL]}, ["r"])
    base, x = _tensor("stepped_offset")
    x.resize_(NUMEL)  # offset 1 + 64 elements: one element of new, uninitialised memory
    assert base.untyped_storage().nbytes() > NUMEL * 4
    with pytest.raises(InvalidArgument, match="negative"):
        REGISTRY["resize_"].infer([m], {"size": [-1]}, ["r"])


def test_resize_of_a_tensor_requiring_grad_is_refused_by_eager_and_excluded():
    x = torch.zeros(4).requires_grad_()
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        x.resize_(2)
    p = Program((StorageSpec("s0", 4),), (TensorSpec("x0", "s0", (4,), (1,), 0, requires_grad=True),),
                (Op("mul.Scalar", ("x0",), {"other": 2.0}, ("v0",)), Op("resize_", ("v0",), {"size": [2]}, ("v1",))),
                ("v1",))
    assert "changes a tensor's metadata in place" in grad_exclusion(p)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_set_rebinds_the_object_to_the_source_layout(layout):
    _, y = _tensor(layout)
    x = torch.zeros(3)
    (got,) = REGISTRY["set_"].infer([ValueMeta((3,), (1,), 0, "float32", "x", 12), _meta(layout)], {}, ["r"])
    assert x.set_(y) is x and _same(got, x) and got.storage == "s"
    assert x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()


@pytest.mark.parametrize(("size", "stride", "offset"), [([2, 3], [1, 2], 2), ([4], [0], 63), ([], [], 7), ([0, 5], [9, 9], 64)])
def test_set_storage_lays_the_object_out_on_the_source_storage(size, stride, offset):
    _, y = _tensor("permuted")
    x = torch.zeros(3)
    xm = ValueMeta((3,), (1,), 0, "float32", "x", 12)
    (got,) = REGISTRY["set_.storage"].infer([xm, _meta("permuted")], {"size": size, "stride": stride, "offset": offset}, ["r"])
    assert x.set_(y.untyped_storage(), offset, size, stride) is x and _same(got, x) and got.storage == "s"


def test_set_refusals_match_eager():
    xm, ym = ValueMeta((3,), (1,), 0, "float32", "x", 12), _meta("contiguous")
    with pytest.raises(InvalidArgument, match="out of bounds|needs"):
        REGISTRY["set_.storage"].infer([xm, ym], {"size": [3], "stride": [1], "offset": 62}, ["r"])
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.zeros(3).set_(torch.zeros(NUMEL).untyped_storage(), 62, (3,), (1,))
    with pytest.raises(InvalidArgument, match="Could not set"):
        REGISTRY["set_"].infer([xm, ValueMeta((3,), (1,), 0, "int64", "y", 24)], {}, ["r"])
    with pytest.raises(RuntimeError, match="Could not set"):
        torch.zeros(3).set_(torch.zeros(3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        torch.zeros(3).requires_grad_().set_(torch.zeros(3))


def _prog(*body, outputs=(), shape=(2, 3), stride=(3, 1), offset=0, numel=12, extra=()):
    return Program(
        (StorageSpec("s0", numel), StorageSpec("s1", 6), StorageSpec("s2", 6, "int64")),
        (TensorSpec("x0", "s0", shape, stride, offset), TensorSpec("x1", "s1", (6,), (1,), 0),
         TensorSpec("i0", "s2", (6,), (1,), 0), *extra),
        tuple(body), tuple(outputs),
    )


def test_set_retires_the_object_and_the_result_aliases_the_source():
    p = _prog(Op("set_", ("x0", "x1"), {}, ("v0",)), Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",)),
              outputs=("v1",))
    typed = infer(p)
    assert typed.retired == {"x0"} and typed.values["v0"] == typed.values["x1"]
    eager = run_eager(p)
    assert eager.error is None and eager.inputs_after[1].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert eager.inputs_after[0].shape == (6,)  # the input object itself was rebound
    with pytest.raises(InvalidArgument, match="'x0' is retired"):
        infer(p.with_body((*p.body, Op("neg", ("x0",), {}, ("v2",)))))


def test_resize_and_set_storage_follow_the_layout_readout_rule():
    # x0 at offset 1 of a stepped layout: resizing to 2 elements reaches storage elements
    # 1 and 2, and 2 is not an element of x0
    stepped = dict(shape=(3,), stride=(2,), offset=1)
    with pytest.raises(NoEagerMeaning, match=LAYOUT_READOUT):
        infer(_prog(Op("resize_", ("x0",), {"size": [2]}, ("v0",)), **stepped))
    assert infer(_prog(Op("resize_", ("x0",), {"size": [1]}, ("v0",)), **stepped)).values["v0"].offset == 1
    # set_.storage takes its layout on x1's storage: it may reach x1's elements only
    x1_at = dict(extra=(TensorSpec("x2", "s1", (2,), (2,), 1),))
    with pytest.raises(NoEagerMeaning, match=LAYOUT_READOUT):
        infer(_prog(Op("set_.storage", ("x0", "x2"), {"size": [2], "stride": [1], "offset": 1}, ("v0",)), **x1_at))
    ok = _prog(Op("set_.storage", ("x0", "x2"), {"size": [2], "stride": [2], "offset": 1}, ("v0",)), **x1_at)
    assert infer(ok).values["v0"].storage == "s1"


def test_requires_grad_takes_floating_bases_and_freezes_their_storage():
    made = (Op("mul.Scalar", ("x0",), {"other": 2.0}, ("v0",)), Op("requires_grad_", ("v0",), {}, ("v1",)))
    p = _prog(*made, Op("mul.Scalar", ("v1",), {"other": 3.0}, ("v2",)), outputs=("v2", "v1"))
    assert infer(p).values["v1"] == infer(p).values["v0"]
    eager = run_eager(p)
    assert eager.error is None and [o.requires_grad for o in eager.outputs] == [True, True]
    assert eager.outputs[1].is_leaf
    with pytest.raises(InvalidArgument, match="may be a view"):
        infer(_prog(Op("requires_grad_", ("x0",), {}, ("v0",))))
    with pytest.raises(InvalidArgument, match="floating"):
        infer(_prog(Op("clone", ("i0",), {}, ("v0",)), Op("requires_grad_", ("v0",), {}, ("v1",))))
    # a later write to its storage (through a view taken after) and a resize are refused,
    # as eager refuses them
    for later in ((Op("select", ("v1",), {"dim": 0, "index": 0}, ("v2",)), Op("zero_", ("v2",), {}, ("v3",))),
                  (Op("resize_", ("v1",), {"size": [6]}, ("v2",)),)):
        bad = _prog(*made, *later)
        with pytest.raises(InvalidArgument, match="leaf requiring grad since statement 1"):
            infer(bad)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad|require grad"):
            run_unchecked(bad)



def test_requires_grad_is_a_gradient_source():
    # a made leaf reaching an out= op is excluded (eager refuses out= of a value requiring grad)
    p = _prog(Op("mul.Scalar", ("x0",), {"other": 2.0}, ("v0",)), Op("requires_grad_", ("v0",), {}, ("v1",)),
              Op("add.out", ("v1", "v1", "x0"), {}, ("v2",)))
    assert "out=" in grad_exclusion(p)
    assert grad_exclusion(p.with_body(p.body[:2], ("v1",))) is None


def _meta_programs(n, seed, **opts):
    return [p for p in generate(n, seed, metadata_share=1.0, **opts) if "metadata" in p.meta]


def test_own_stream_leaves_other_programs_alone_and_reaches_the_target():
    with_meta = generate(300, 0)
    without = generate(300, 0, metadata_share=0.0)
    hit = [i for i, p in enumerate(with_meta) if "metadata" in p.meta]
    assert len(hit) >= 0.02 * 300
    assert all(with_meta[i] == without[i] for i in range(300) if i not in hit)
    assert generate_one(0, hit[0]) == with_meta[hit[0]]
    with pytest.raises(InvalidArgument, match="metadata_share"):
        generate(1, 0, metadata_share=-0.1)
    assert not _meta_programs(20, 0, families=("inplace", "functional"))  # needs "view"


def test_every_row_is_drawn_and_runs_with_one_eager_meaning():
    progs = _meta_programs(150, 3, max_statements=4)
    assert {p.meta["metadata"] for p in progs} == {n for n, d in REGISTRY.items() if "own_stream" in d.tags}
    for p in progs[:60]:
        infer(p)
        first = run_eager(p)
        assert first.error is None, (first.error, p.dumps())
        with deterministic_one_thread():
            second = run_eager(p)
        for a, b in itertools.chain(zip(first.outputs, second.outputs, strict=True),
                                    zip(first.inputs_after, second.inputs_after, strict=True)):
            assert not isinstance(a, torch.Tensor) or (
                a.shape == b.shape and a.stride() == b.stride() and torch.equal(a.detach(), b.detach())), p.dumps()
        if p.meta["metadata"] == "requires_grad_":
            assert grad_exclusion(p) is None
