"""Every view row's alias rule against PyTorch, op by op, on hand-picked layouts.

Each case applies one view op with fixed parameters to a few input layouts (contiguous,
permuted, stepped with a storage offset, expanded, size-1 dims with odd strides, 2-d
transposed) and asserts that the registry's ``infer`` either rejects the call exactly when
PyTorch raises, or gives exactly PyTorch's sizes, strides, storage offset and dtype on the
same storage (``reshape``: on a fresh one when PyTorch copies). The torch side calls
torch directly, not the registry's ``apply``.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops import REGISTRY, OpKind, ValueMeta
from aliasfuzz.fuzz.ops.metadata import BASE_ONLY

# (shape, stride, offset) on a float32 storage of 64 elements.
LAYOUTS = {
    "contiguous": ((2, 3, 4), (12, 4, 1), 0),
    "permuted": ((4, 3, 2), (1, 4, 12), 0),
    "stepped_offset": ((2, 3, 2), (24, 8, 2), 1),
    "expanded": ((2, 3, 4), (0, 4, 1), 2),
    "size1_odd_strides": ((1, 3, 1), (7, 2, 5), 3),
    "matrix_t": ((3, 4), (1, 3), 2),
}
NUMEL = 64

T = torch
CASES = {
    "view": [({"shape": s}, lambda x, p: x.view(p["shape"]))
             for s in ([-1], [6, 4], [2, 12], [4, 3, 2], [2, 3, 2, 2], [24, 1], [12, -1], [5, 5])],
    "reshape": [({"shape": s}, lambda x, p: x.reshape(p["shape"]))
                for s in ([-1], [6, 4], [2, 12], [3, 2, 2], [1, 12])],
    "index": [({"idx": i}, lambda x, p: x[_py(p["idx"])]) for i in (
        [0], [[None, None, 2]], [[1, None, None], 0, None, "..."], ["...", [0, 2, None]],
        [None, -1], [[5, 1, None]], [[-2, None, 1]], [3], [0, 0, 0, 0], [[0, 9, 3], None],
    )],
    "select": [({"dim": d, "index": i}, lambda x, p: x.select(p["dim"], p["index"]))
               for d, i in ((1, -1), (0, 1), (0, 2), (-1, 0))],
    "narrow": [({"dim": d, "start": s, "length": n}, lambda x, p: x.narrow(p["dim"], p["start"], p["length"]))
               for d, s, n in ((1, 1, 2), (0, -1, 1), (1, 1, 5), (-1, 0, 0))],
    "transpose": [({"dim0": a, "dim1": b}, lambda x, p: x.transpose(p["dim0"], p["dim1"]))
                  for a, b in ((0, 1), (-1, 1), (0, 3))],
    "permute": [({"dims": d}, lambda x, p: x.permute(p["dims"])) for d in ([2, 0, 1], [1, 0], [0, 0, 1])],
    "t": [({}, lambda x, p: x.t())],
    "unsqueeze": [({"dim": d}, lambda x, p: x.unsqueeze(p["dim"])) for d in (0, 2, -1, 3)],
    "squeeze": [({}, lambda x, p: x.squeeze()), ({"dim": 0}, lambda x, p: x.squeeze(0)),
                ({"dim": -1}, lambda x, p: x.squeeze(-1))],
    "expand": [({"size": s}, lambda x, p: x.expand(p["size"]))
               for s in ([2, 2, 3, 4], [-1, -1, -1], [1, 3, 4], [2, -1, 3, 4], [5, 3, 4])],
    "as_strided": [({"size": s, "stride": st, "offset": o},
                    lambda x, p: x.as_strided(p["size"], p["stride"], p["offset"]))
                   for s, st, o in (([2, 2], [1, 2], 1), ([3], [5], 50), ([4, 4], [16, 1], 10), ([2], [0], 63))],
    "diagonal": [({"offset": k, "dim1": a, "dim2": b}, lambda x, p: x.diagonal(p["offset"], p["dim1"], p["dim2"]))
                 for k, a, b in ((0, 0, 1), (1, 1, 2), (-1, 2, 0), (0, 1, 1), (5, 0, 1))],
    "view_dtype": [({"dtype": d}, lambda x, p: x.view(getattr(T, p["dtype"])))
                   for d in ("int16", "int64", "int32", "uint8")],
    "split": [({"split_size": k, "dim": d}, lambda x, p: x.split(p["split_size"], p["dim"]))
              for k, d in ((2, 1), (1, 0), (3, -1))],
    "chunk": [({"chunks": c, "dim": d}, lambda x, p: x.chunk(p["chunks"], p["dim"]))
              for c, d in ((3, 2), (2, 0), (4, 1))],
    "unbind": [({"dim": d}, lambda x, p: x.unbind(p["dim"])) for d in (0, -1)],
    "dropout_eval": [({"p": 0.5}, lambda x, p: T.nn.functional.dropout(x, p["p"], False))],
    # metadata-mutating in-place ops (fuzz/ops/metadata.py): x itself, relaid
    "t_": [({}, lambda x, p: x.t_())],
    "transpose_": [({"dim0": a, "dim1": b}, lambda x, p: x.transpose_(p["dim0"], p["dim1"]))
                   for a, b in ((0, 1), (-1, 1), (0, 3))],
    "squeeze_": [({}, lambda x, p: x.squeeze_()), ({"dim": 0}, lambda x, p: x.squeeze_(0)),
                 ({"dim": -1}, lambda x, p: x.squeeze_(-1))],
    "unsqueeze_": [({"dim": d}, lambda x, p: x.unsqueeze_(p["dim"])) for d in (0, 2, -1, 3)],
    "as_strided_": [({"size": s, "stride": st, "offset": o},
                     lambda x, p: x.as_strided_(p["size"], p["stride"], p["offset"]))
                    for s, st, o in (([2, 2], [1, 2], 1), ([3], [5], 50), ([2], [0], 63))],
    # own sizes (unchanged, strides kept), another shape, fewer, none, 0-d; all within the
    # 64-element storage (growth is refused by infer: its own test in test_metadata_resize)
    "resize_": [({"size": s}, lambda x, p: x.resize_(p["size"]))
                for s in ([2, 3, 4], [4, 3, 2], [3, 4], [6, 5], [5], [0, 3], [], [3, 2])],
}

#: rows whose result is their argument object itself (its metadata changed in place)
SAME_OBJECT = {"t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_", "resize_"}


def _py(items):
    return tuple(Ellipsis if it == "..." else slice(*it) if isinstance(it, list) else it for it in items)


def test_every_view_row_has_cases():
    # base_only rows (detach_, requires_grad_) refuse the views this table builds: their own
    # test below; rows of two tensors (resize_as_, set_) have theirs in test_metadata_resize
    views = {n for n, d in REGISTRY.items() if d.kind is OpKind.VIEW
             and d.apply.__module__.endswith((".views", ".metadata"))
             and BASE_ONLY not in d.tags and d.arity == 1}
    assert views == set(CASES)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_detach_in_place_of_a_base_is_the_same_object_and_layout(layout):
    shape, stride, offset = LAYOUTS[layout]
    base = torch.arange(NUMEL, dtype=torch.float32)
    x = torch.empty(0).set_(base.untyped_storage(), offset, shape, stride)  # not a view
    meta = ValueMeta(shape, stride, offset, "float32", "s", NUMEL * 4)
    got = REGISTRY["detach_"].infer([meta], {}, ["r"])
    want = x.detach_()
    assert want is x and not x._is_view()
    assert [(g.shape, g.stride, g.offset, g.storage) for g in got] == [
        (tuple(want.shape), want.stride(), want.storage_offset(), "s")]


def _params():
    for op, cases in CASES.items():
        for k, (params, fn) in enumerate(cases):
            for lay in LAYOUTS:
                yield pytest.param(op, params, fn, lay, id=f"{op}-{k}-{lay}")


@pytest.mark.parametrize(("op", "params", "fn", "layout"), list(_params()))
def test_alias_rule_matches_pytorch(op, params, fn, layout):
    shape, stride, offset = LAYOUTS[layout]
    base = torch.arange(NUMEL, dtype=torch.float32)
    x = base.as_strided(shape, stride, offset)
    meta = ValueMeta(shape, stride, offset, "float32", "s", NUMEL * 4)
    try:
        want = fn(x, params)
    except (RuntimeError, IndexError, ValueError):
        want = None
    if want is not None and op in SAME_OBJECT:
        assert want is x, f"{op} returned another tensor object"
    try:
        got = REGISTRY[op].infer([meta], params, ["r"])
    except InvalidArgument:
        got = None
    assert (got is None) == (want is None), f"infer {'rejects' if got is None else 'accepts'}, torch disagrees"
    if want is None:
        return
    want = list(want) if isinstance(want, tuple | list) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g.shape, g.stride, g.offset, g.dtype) == (
            tuple(w.shape), w.stride(), w.storage_offset(), str(w.dtype).removeprefix("torch.")
        )
        shares = w.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        assert shares == (g.storage == "s")
