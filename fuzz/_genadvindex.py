"""Drawing advanced indexing with index tensors that are program values (``x[rows] = v``).

Part of the generator core of :mod:`aliasfuzz.fuzz.strategies`. The rows of
:mod:`aliasfuzz.fuzz.ops._advindex` (``index_put_.Tensor``, ``setitem_tensor``,
``setitem_tensor.Scalar``, ``getitem_tensor``) take their index tensors from the program, so
a row ``gen`` cannot draw them: the indices must exist as values first, with contents that
keep every call in range and, for a write without ``accumulate``, free of repeats (eager
has no single meaning otherwise). :func:`add_advindex` therefore adds a whole statement to
a drawn program: fresh int64 (or int32) index inputs on ``values`` storages (their contents
are in the program, so validation checks them: :func:`aliasfuzz.fuzz.ops._advindex.check_known_indices`,
and every run, the fp64 shadow's included, gets the same exact integers), the values
tensor (an earlier value that fits, or a fresh input), and the statement itself, inserted
at a drawn place in the body so that later statements read what it wrote. A gather may be
followed by the store back through the same indices (``shared/cases/c06``).

It runs after the rest of the program is drawn, with a draw of its own in the sampler (its
stream is seeded from ``(seed, index)`` apart from the program's: adding the family left
every other program of a seed as it was). Shrinking: the choices sit behind booleans whose
False is the simple case (one 1-d index tensor, distinct indices, no ``accumulate``, the
statement last in the body, the first fitting target), indices shrink toward 0, and the
shrinker (:mod:`aliasfuzz.campaign.shrink`) drops the statement like any other, then the
unused index inputs.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz._gentry import first_fit, fresh_name, taken_names
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides
from aliasfuzz.fuzz.ops.core import ValueMeta, broadcast_shapes

if TYPE_CHECKING:
    from aliasfuzz.fuzz.strategies import DrawBase, GenConfig, GenStats

__all__ = ["ADV_ROWS", "add_advindex"]

#: The rows drawn, in shrink order (the first is the shrink target), with the generator
#: family each needs in ``cfg.families``.
ADV_ROWS: tuple[tuple[str, str], ...] = (
    ("setitem_tensor", "inplace"),
    ("index_put_.Tensor", "inplace"),
    ("getitem_tensor", "functional"),
    ("setitem_tensor.Scalar", "inplace"),
)
_MAX_INDEX_TENSORS = 3
_MAX_POSITIONS = 4  # entries per index dim: small programs, small repros


def add_advindex(
    program: Program, draw: DrawBase, cfg: GenConfig, stats: GenStats | None = None
) -> Program:
    """``program`` with one advanced-indexing statement added, for a ``cfg.advindex_share``
    of draws; else ``program`` itself.

    Only when ``cfg.index_inputs`` is set and a row's family is in ``cfg.families``. Tries
    a few times (each try validated with :func:`~aliasfuzz.fuzz.validate.infer`) and
    returns ``program`` unchanged when none fits; ``stats`` counts the tries per row as
    :class:`~aliasfuzz.fuzz.strategies.GenStats` does. ``meta["advindex"]`` records the row.
    """
    rows = [r for r, fam in ADV_ROWS if fam in cfg.families]
    if not rows or not cfg.index_inputs or not draw.boolean(cfg.advindex_share):
        return program
    return first_fit(program, draw, rows, _draw_statement, "advindex", stats)


def _targets(program: Program, pos: int, row: str) -> list[tuple[str, ValueMeta]]:
    """Values defined before statement ``pos`` (not retired there) that ``row`` may index."""
    from aliasfuzz.fuzz.validate import infer

    typed = infer(program.with_body(program.body[:pos], ()))
    out = []
    for n, m in typed.values.items():
        if m is None or n in typed.retired or m.ndim == 0 or m.numel == 0 or 0 in m.shape:
            continue
        if row != "getitem_tensor" and m.has_internal_overlap():
            continue  # index_put_ refuses to write through two indices to one element
        out.append((n, m))
    return out


def _draw_statement(draw: DrawBase, program: Program, row: str) -> Program:
    n = len(program.body)
    pos = n - draw.integer(0, n) if draw.boolean(0.5) else n  # shrinks toward "last"
    targets = _targets(program, pos, row)
    if not targets:
        raise GenerationFailure("no value to index")
    x, xm = draw.choice(targets)
    write = row != "getitem_tensor"
    accumulate = row == "index_put_.Tensor" and xm.dtype != "bool" and draw.boolean(0.3)
    back = row == "getitem_tensor" and draw.boolean(0.3)  # c06: store the gather back
    distinct = (write and not accumulate) or back
    taken = taken_names(program)
    storages, inputs, idx_names, shape = _index_inputs(draw, xm, distinct, taken)
    k = len(idx_names)
    indexed = shape + xm.shape[k:]
    params = {"accumulate": True} if accumulate else {}
    extra: list[Op] = []
    if row == "getitem_tensor":
        g = fresh_name("v", taken)
        ops = [Op(row, (x, *idx_names), {}, (g,))]
        if back:
            extra = [Op("setitem_tensor", (x, g, *idx_names))]
        returns = [g]
    elif row == "setitem_tensor.Scalar":
        ops = [Op(row, (x, *idx_names), {"value": _scalar(draw, xm.dtype)})]
        returns = [x]
    else:
        vname, vst, vin = _values(draw, program, pos, xm, indexed, taken)
        storages, inputs = storages + vst, inputs + vin
        outs = (fresh_name("v", taken),) if row == "index_put_.Tensor" else ()
        ops = [Op(row, (x, vname, *idx_names), params, outs)]
        returns = list(outs) or [x]
    body = (*program.body[:pos], *ops, *program.body[pos:], *extra)
    outputs = list(program.outputs)
    inputs_on = {t.storage for t in program.inputs}
    # a gather nobody reads, or a write into fresh memory, would be dead code: returned
    if returns[0] not in outputs and (not write or xm.storage not in inputs_on or draw.boolean(0.5)):
        outputs.append(returns[0])
    return Program(program.storages + tuple(storages), program.inputs + tuple(inputs),
                   body, tuple(outputs), dict(program.meta))


def _index_inputs(draw: DrawBase, xm: ValueMeta, distinct: bool, taken: set[str]):
    """Index inputs for target ``xm``: storages, inputs, their names and broadcast shape."""
    k = 1
    while k < min(xm.ndim, _MAX_INDEX_TENSORS) and draw.boolean(0.25):
        k += 1
    space = math.prod(xm.shape[:k])
    shape = (draw.integer(1, _MAX_POSITIONS),)
    if draw.boolean(0.2):
        shape = (draw.integer(1, 2), *shape)  # a 2-d index: the indexed shape gains a dim
    # Each index tensor broadcasts to ``shape``: a size-1 dim (rare) repeats its entry.
    shapes = [tuple(1 if k > 1 and draw.boolean(0.15) else s for s in shape) for _ in range(k)]
    shape = broadcast_shapes(*shapes)
    count = math.prod(shape)
    if distinct and count > space:
        raise GenerationFailure(f"{count} distinct positions among {space}")
    if distinct and all(s == shape for s in shapes):
        pool = list(itertools.product(*(range(xm.shape[d]) for d in range(k))))
        rows = []
        for _ in range(count):  # distinct tuples, each shrinking toward the first position
            rows.append(pool.pop(draw.integer(0, len(pool) - 1)))
        data = [[r[d] for r in rows] for d in range(k)]
    else:  # free draws (repeats allowed; validation refuses repeats a write forbids)
        data = [[draw.integer(0, xm.shape[d] - 1) for _ in range(math.prod(shapes[d]))] for d in range(k)]
    data = [[i - xm.shape[d] if draw.boolean(0.1) else i for i in col] for d, col in enumerate(data)]
    dtype = "int32" if draw.boolean(0.15) else "int64"
    shared = k > 1 and draw.boolean(0.2)  # the index tensors are views of one storage
    storages, inputs, names = [], [], []
    if shared:
        st = StorageSpec(fresh_name("si", taken), sum(map(len, data)), dtype, "values",
                         {"data": [i for col in data for i in col]})
        storages.append(st)
    offset = 0
    for d in range(k):
        if not shared:
            st = StorageSpec(fresh_name("si", taken), len(data[d]), dtype, "values", {"data": data[d]})
            storages.append(st)
            offset = 0
        name = fresh_name("i", taken)
        inputs.append(TensorSpec(name, st.name, shapes[d], contiguous_strides(shapes[d]), offset))
        names.append(name)
        offset += len(data[d])
    return storages, inputs, names, shape


def _values(draw: DrawBase, program: Program, pos: int, xm: ValueMeta, indexed, taken: set[str]):
    """The values argument: an earlier value broadcasting to ``indexed`` (``x``'s dtype, not
    sharing its storage), or a fresh input; returns (name, new storages, new inputs)."""
    from aliasfuzz.fuzz.validate import infer

    if draw.boolean(0.5):
        typed = infer(program.with_body(program.body[:pos], ()))
        fits = [n for n, m in typed.values.items()
                if m is not None and n not in typed.retired and m.dtype == xm.dtype
                and m.storage != xm.storage and _broadcasts(m.shape, indexed)]
        if fits:
            return draw.choice(fits), [], []
    cut = draw.integer(0, len(indexed)) if draw.boolean(0.3) else 0  # a suffix broadcasts
    shape = tuple(indexed[cut:])
    init, args = ("randn", {"seed": draw.integer(0, 255)}) if xm.is_float and draw.boolean(0.3) else ("arange", {})
    st = StorageSpec(fresh_name("sv", taken), max(math.prod(shape), 1), xm.dtype, init, args)
    name = fresh_name("iv", taken)
    return name, [st], [TensorSpec(name, st.name, shape, contiguous_strides(shape), 0)]


def _broadcasts(shape, target) -> bool:
    try:
        return broadcast_shapes(shape, target) == tuple(target)
    except InvalidArgument:
        return False


def _scalar(draw: DrawBase, dtype: str):
    from aliasfuzz.fuzz.ops._build import fits

    v = draw.scalar(dtype)
    return v if fits(v, dtype) else 0
