"""Shadows, footprints and parameter generators of the Triton launch rows (:mod:`.kernels`).

A *shadow* replays one launch in Python: for evaluated launch values ``v`` (``grid``,
``BLOCK`` and the scalars, see ``kernels._check_params``) it yields one
:class:`Access` per element a program touches, ``(arg, write, key, element)``, where
``element`` is a storage element index (the argument's ``offset`` plus the kernel's
pointer arithmetic) and ``key`` names the program and lane doing it. Shadows mirror the
sources of :mod:`._kernelsrc` line by line; the unit tests run both and compare.

From a shadow, :func:`check_launch` decides validity: every access must lie in its
argument's layout (``InvalidArgument`` otherwise: the launch would touch memory no
argument owns), and an element written by one program lane must not be touched by any
other (a race: the interpreter and a GPU could disagree). The ``writes_*`` functions give
the exact layouts a launch writes (empty when it writes nothing: ``n == 0``, ``flag == 0``);
the ``gen_*`` functions draw launch parameters that validation accepts for given
arguments, or raise :class:`GenerationFailure`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ops.core import ENUM_LIMIT, Draw, NoEagerMeaning, ValueMeta

Metas = Sequence[ValueMeta]

#: BLOCK sizes drawn, shrink target first.
BLOCKS = (16, 4, 8, 32, 64, 128)
#: Scale factors drawn: never 1 (nor 0), so a scaled nonzero element always changes.
ALPHAS = (2.0, 0.5, -1.0, 3.0, -2.5)


class Access(NamedTuple):
    """One element touched by one program lane of a launch."""

    arg: int
    write: bool
    key: tuple
    element: int


Shadow = Callable[[Metas, dict], Iterator[Access]]


# -- shadows --------------------------------------------------------------------------------
def _programs(v: dict) -> Iterator[tuple[int, ...]]:
    g = list(v["grid"]) + [1] * (3 - len(v["grid"]))
    return itertools.product(range(g[0]), range(g[1]), range(g[2]))


def _flat_lanes(v: dict, n: int) -> Iterator[tuple[tuple, int]]:
    """(key, flat index) of every unmasked lane ``offs = pid0 * BLOCK + k < n``."""
    b = v["BLOCK"]
    for pid in _programs(v):
        for k in range(b):
            i = pid[0] * b + k
            if i < n:
                yield (pid, k), i


def shadow_elementwise(loads: tuple[int, ...], stores: tuple[int, ...]):
    """Flat elementwise kernels: lane ``i < n`` loads ``loads`` then stores ``stores`` at
    flat index ``off + i`` (an in-place kernel loads and stores its one argument)."""

    def shadow(metas: Metas, v: dict) -> Iterator[Access]:
        if not v.get("flag", 1):
            return
        off = v.get("off", 0)
        for key, i in _flat_lanes(v, v["n"]):
            for a in loads:
                yield Access(a, False, key, metas[a].offset + off + i)
            for a in stores:
                yield Access(a, True, key, metas[a].offset + off + i)

    return shadow


def shadow_scale_then_shift(metas: Metas, v: dict) -> Iterator[Access]:
    for pid in _programs(v):
        for k in range(v["BLOCK"]):
            for a in (0, 1):
                yield Access(a, False, (pid, k), metas[a].offset + k)
                yield Access(a, True, (pid, k), metas[a].offset + k)


def _rows_lanes(v: dict, m: int, n: int) -> Iterator[tuple[tuple, int, int]]:
    """(key, row, col) of every unmasked lane of a row-per-program 2-d kernel."""
    b = v["BLOCK"]
    for pid in _programs(v):
        for k in range(b):
            i, j = pid[0], pid[1] * b + k
            if i < m and j < n:
                yield (pid, k), i, j


def shadow_scale2d(metas: Metas, v: dict) -> Iterator[Access]:
    x = metas[0]
    for key, i, j in _rows_lanes(v, v["M"], v["N"]):
        e = x.offset + i * v["s0"] + j * v["s1"]
        yield Access(0, False, key, e)
        yield Access(0, True, key, e)


def shadow_transpose_copy(metas: Metas, v: dict) -> Iterator[Access]:
    x, out = metas
    for key, i, j in _rows_lanes(v, v["M"], v["N"]):
        yield Access(0, False, key, x.offset + j * v["xs0"] + i * v["xs1"])
        yield Access(1, True, key, out.offset + i * v["os0"] + j * v["os1"])


def shadow_flip_copy(metas: Metas, v: dict) -> Iterator[Access]:
    x, out = metas
    n = v["n"]
    for key, i in _flat_lanes(v, n):
        yield Access(0, False, key, x.offset + n - 1 - i)
        yield Access(1, True, key, out.offset + i)


def shadow_pair_sums(metas: Metas, v: dict) -> Iterator[Access]:
    x, out = metas
    for key, i in _flat_lanes(v, v["n"]):
        yield Access(0, False, key, x.offset + i)
        yield Access(0, False, key, x.offset + i + 1)
        yield Access(1, True, key, out.offset + i)


# -- validity -------------------------------------------------------------------------------
def _lanes(v: dict) -> int:
    g = 1
    for x in v["grid"]:
        g *= max(x, 0)
    return g * v["BLOCK"]


def check_launch(name: str, shadow: Shadow, metas: Metas, v: dict) -> None:
    """Raise :class:`InvalidArgument` if the launch leaves an argument's layout or races.

    Skipped (accepted) above :data:`ENUM_LIMIT` elements or lanes: generated programs stay
    far below it; hand-written large launches are then the author's responsibility.
    """
    if any(m.numel > ENUM_LIMIT for m in metas) or _lanes(v) > ENUM_LIMIT:
        return
    owned = [m.elements() for m in metas]
    seen: dict[tuple[str, int], tuple[set, bool]] = {}
    for a in shadow(metas, v):
        if a.element not in owned[a.arg]:
            raise InvalidArgument(
                f"{name}: touches storage element {a.element} of argument {a.arg}, "
                "outside its layout"
            )
        slot = (metas[a.arg].storage, a.element)
        keys, wrote = seen.get(slot, (set(), False))
        keys.add(a.key)
        seen[slot] = (keys, wrote or a.write)
    for (storage, e), (keys, wrote) in seen.items():
        if wrote and len(keys) > 1:
            raise NoEagerMeaning(
                "racing-lanes",
                "a program lane writes an element another lane touches (a race)",
                f"{name}: element {e} of {storage}",
            )


# -- exact write footprints ----------------------------------------------------------------
def flat_layout(m: ValueMeta, start: int, n: int) -> list[ValueMeta]:
    """Storage elements ``m.offset + start .. + n - 1`` as a layout (``m`` itself if equal)."""
    if n <= 0:
        return []
    if start == 0 and n == m.numel and dense_prefix(m) >= n:
        return [m]
    return [m.view((n,), (1,), m.offset + start)]


def writes_elementwise(*idx: int):
    """The first ``n`` flat elements of each written argument (from ``off``); none if gated."""

    def writes(metas: Metas, v: dict) -> list[ValueMeta]:
        if not v.get("flag", 1):
            return []
        return [w for i in idx for w in flat_layout(metas[i], v.get("off", 0), v["n"])]

    return writes


def writes_scale_then_shift(metas: Metas, v: dict) -> list[ValueMeta]:
    return [w for i in (0, 1) for w in flat_layout(metas[i], 0, v["BLOCK"])]


def _block_2d(m: ValueMeta, v: dict, strides: tuple[int, int]) -> list[ValueMeta]:
    rows = min(v["M"], v["grid"][0])
    cols = min(v["N"], v["grid"][1] * v["BLOCK"] if len(v["grid"]) > 1 else v["BLOCK"])
    if rows <= 0 or cols <= 0 or any(g <= 0 for g in v["grid"]):
        return []
    if (rows, cols) == m.shape and strides == m.stride:
        return [m]
    return [m.view((rows, cols), strides, m.offset)]


def writes_scale2d(metas: Metas, v: dict) -> list[ValueMeta]:
    return _block_2d(metas[0], v, (v["s0"], v["s1"]))


def writes_transpose_copy(metas: Metas, v: dict) -> list[ValueMeta]:
    return _block_2d(metas[1], v, (v["os0"], v["os1"]))


# -- layouts -------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1 << 14)
def dense_prefix(m: ValueMeta) -> int:
    """How many storage elements from ``m.offset`` on lie in ``m``'s layout (flat reach)."""
    if m.numel > ENUM_LIMIT:
        return m.numel if m.is_contiguous() else 0
    owned = m.elements()
    n = 0
    while m.offset + n in owned:
        n += 1
    return n


def float32_only(arity: int, ndims: tuple[int, ...] | None = None, written: tuple[int, ...] = ()):
    """``accepts``: ``arity`` float32 arguments with elements (and these ranks, if given);
    the ``written`` ones without internal overlap (two lanes would store to one element)."""

    def ok(metas: Metas) -> bool:
        if len(metas) != arity or any(m.dtype != "float32" or m.numel == 0 for m in metas):
            return False
        if ndims is not None and tuple(m.ndim for m in metas) != ndims:
            return False
        return not any(
            metas[i].numel <= ENUM_LIMIT and metas[i].has_internal_overlap() for i in written
        )

    return ok


# -- parameter generators ----------------------------------------------------------------------
#: Share of the generator's tries at a launch row that go on to draw a launch. The ``triton``
#: family is one of seven default families; unthrottled, 12 % of statements (and half of
#: all programs) would be launches, which TorchScript cannot script and every pipeline runs
#: slowly. Throttled, about 4 % of statements are launches (``bench/validity.py``).
LAUNCH_RATE = 0.35


def throttled(gen: Callable[[Draw, Metas], dict]) -> Callable[[Draw, Metas], dict]:
    """``gen`` behind a :data:`LAUNCH_RATE` coin (``GenerationFailure`` when it says no).

    The coin is the first draw and shrinks toward "no launch", so a shrunk program keeps
    a launch only where the failure needs it. ``.unthrottled`` is ``gen`` itself.
    """

    def gen_throttled(draw: Draw, metas: Metas) -> dict:
        if not draw.boolean(LAUNCH_RATE):
            raise GenerationFailure("launch rate: not this time")
        return gen(draw, metas)

    gen_throttled.unthrottled = gen  # type: ignore[attr-defined]
    return gen_throttled


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _tail(draw: Draw, grid: list) -> list:
    """Sometimes pad the grid with unused dims of 1 (1-3 entries in all)."""
    while len(grid) < 3 and draw.boolean(0.15):
        grid.append(1)
    return grid


def _flat_n(draw: Draw, metas: Metas, idx: Sequence[int]) -> tuple[Any, int]:
    """``n`` for flat kernels over ``idx``: an expression when it covers a whole argument."""
    reach = min(dense_prefix(metas[i]) for i in idx)
    if reach == 0:
        raise GenerationFailure("an argument has no dense prefix")
    whole = [i for i in idx if metas[i].numel == reach]
    # arguments on one storage: validation refuses a prefix that partially overlaps a layout
    shared = len({metas[i].storage for i in idx}) < len(idx)
    if whole and (shared or not draw.boolean(0.3)):
        return f"numel({draw.choice(whole)})", reach
    if draw.boolean(0.1):
        return 0, 0
    n = draw.integer(1, reach)
    return n, n


def _flat_grid(draw: Draw, n_expr: Any, n: int, block: int) -> list:
    """Enough programs for ``n`` lanes: ``cdiv(n, BLOCK)``, sometimes one spare program."""
    if n == 0:
        return _tail(draw, [1])
    if isinstance(n_expr, str) and not draw.boolean(0.2):
        return _tail(draw, [f"cdiv({n_expr},{block})"])
    return _tail(draw, [_cdiv(n, block) + (1 if draw.boolean(0.15) else 0)])


def gen_elementwise(idx: tuple[int, ...], alpha: bool = False, flag: bool = False):
    """Launch parameters of a flat elementwise kernel over arguments ``idx``."""

    def gen(draw: Draw, metas: Metas) -> dict:
        block = draw.choice(BLOCKS)
        n_expr, n = _flat_n(draw, metas, idx)
        p: dict[str, Any] = {"grid": _flat_grid(draw, n_expr, n, block), "BLOCK": block}
        p["n"] = n_expr
        if flag:
            p["flag"] = 0 if draw.boolean(0.3) else 1
        if alpha:
            p["alpha"] = draw.choice(ALPHAS)
        return p

    return gen


def gen_offset_scale(draw: Draw, metas: Metas) -> dict:
    reach = dense_prefix(metas[0])
    block = draw.choice(BLOCKS)
    off = draw.integer(0, reach - 1)
    n = 0 if draw.boolean(0.1) else draw.integer(1, reach - off)
    return {
        "grid": _flat_grid(draw, n, n, block),
        "BLOCK": block,
        "off": off,
        "n": n,
        "alpha": draw.choice(ALPHAS),
    }


def gen_scale_then_shift(draw: Draw, metas: Metas) -> dict:
    reach = min(dense_prefix(m) for m in metas)
    blocks = [b for b in (2, 4, 8, 16, 32, 64, 128) if b <= reach]
    if not blocks:
        raise GenerationFailure("fewer than 2 dense elements")
    # one program only: every program would rewrite the same BLOCK elements
    return {"grid": _tail(draw, [1]), "BLOCK": draw.choice(blocks)}


def _extent(draw: Draw, expr: str, size: int) -> Any:
    """A 2-d extent: the whole dim as an expression, or sometimes fewer (a partial write)."""
    if size > 1 and draw.boolean(0.2):
        return draw.integer(1, size - 1)
    return expr


def _grid_2d(draw: Draw, rows_expr: Any, cols_expr: Any, rows: int, cols: int, block: int):
    if isinstance(rows_expr, str) and not draw.boolean(0.2):
        g0: Any = rows_expr
    else:
        g0 = rows + (1 if draw.boolean(0.1) else 0)
    if isinstance(cols_expr, str) and not draw.boolean(0.2):
        g1: Any = f"cdiv({cols_expr},{block})"
    else:
        g1 = _cdiv(cols, block)
    return _tail(draw, [g0, g1])


def _launch_2d(draw: Draw, m_expr: str, m: int, n_expr: str, n: int) -> dict:
    """Grid, BLOCK and extents ``M``/``N`` of a 2-d launch over ``m`` x ``n`` elements
    (each extent the whole dim's expression, or sometimes fewer: a partial write)."""
    m_expr = _extent(draw, m_expr, m)
    n_expr = _extent(draw, n_expr, n)
    m = m if isinstance(m_expr, str) else m_expr
    n = n if isinstance(n_expr, str) else n_expr
    block = draw.choice(BLOCKS)
    grid = _grid_2d(draw, m_expr, n_expr, m, n, block)
    return {"grid": grid, "BLOCK": block, "M": m_expr, "N": n_expr}


def gen_scale2d(draw: Draw, metas: Metas) -> dict:
    x = metas[0]
    # walking x transposed (its dims and strides swapped) writes the same elements
    d0, d1 = (1, 0) if draw.boolean(0.2) else (0, 1)
    return {
        **_launch_2d(draw, f"size(0,{d0})", x.shape[d0], f"size(0,{d1})", x.shape[d1]),
        "s0": f"stride(0,{d0})",
        "s1": f"stride(0,{d1})",
        "alpha": draw.choice(ALPHAS),
    }


def gen_transpose_copy(draw: Draw, metas: Metas) -> dict:
    x, out = metas
    # out[i, j] = x[j, i]: i < M <= min(out rows, x cols), j < N <= min(out cols, x rows)
    m_expr = "size(1,0)" if out.shape[0] <= x.shape[1] else "size(0,1)"
    n_expr = "size(1,1)" if out.shape[1] <= x.shape[0] else "size(0,0)"
    m, n = min(out.shape[0], x.shape[1]), min(out.shape[1], x.shape[0])
    return {
        **_launch_2d(draw, m_expr, m, n_expr, n),
        "xs0": "stride(0,0)",
        "xs1": "stride(0,1)",
        "os0": "stride(1,0)",
        "os1": "stride(1,1)",
    }


def gen_pair_sums(draw: Draw, metas: Metas) -> dict:
    x, out = metas
    reach = min(dense_prefix(x) - 1, dense_prefix(out))
    if reach < 1:
        raise GenerationFailure("x needs two dense elements")
    block = draw.choice(BLOCKS)
    if out.numel == reach and not draw.boolean(0.3):
        n_expr: Any = "numel(1)"
        n = reach
    else:
        n = n_expr = 0 if draw.boolean(0.1) else draw.integer(1, reach)
    return {"grid": _flat_grid(draw, n_expr, n, block), "BLOCK": block, "n": n_expr}
