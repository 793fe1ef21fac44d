"""Z3 plumbing for the memory model: sympy -> Z3 translation and a cached solver.

Private to :mod:`aliasfuzz.oracle.memory`. The translation covers what torch SymInts carry
(``symint.node.expr``): symbols, integers, ``+``, ``*``, ``**`` with a non-negative integer
exponent, ``Mod``/``PythonMod`` (Z3 ``%``), ``FloorDiv``/``CleanDiv`` (Z3 ``/``, which is
floor division for a positive divisor), ``Max``/``Min`` and relations, ``And``/``Or``/``Not``
for guards. Anything else raises :class:`Unsupported`, which the caller turns into UNKNOWN.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

import sympy
import z3

__all__ = [
    "Answer",
    "Translator",
    "Unsupported",
    "cover_query",
    "dense_cover_query",
    "overlap_query",
    "solver",
]


class Unsupported(Exception):
    """A sympy expression outside the supported fragment (becomes an UNKNOWN answer)."""


def _torch_sympy_classes() -> dict[str, tuple[type, ...]]:
    # torch's own sympy functions (FloorDiv, Mod, ...) live in torch.utils._sympy.functions;
    # import lazily and by name so that this module does not need torch to be importable.
    try:
        from torch.utils._sympy import functions as f
    except ImportError:  # pragma: no cover - torch is a hard dependency of aliasfuzz
        return {}
    names = {
        "mod": ("Mod", "PythonMod"),
        "floordiv": ("FloorDiv", "CleanDiv", "IntTrueDiv"),
        "max": ("Max",),
        "min": ("Min",),
    }
    table: dict[str, tuple[type, ...]] = {}
    for key, candidates in names.items():
        table[key] = tuple(getattr(f, n) for n in candidates if hasattr(f, n))
    table["floordiv"] = tuple(c for c in table["floordiv"] if c.__name__ != "IntTrueDiv")
    return table


_TORCH = _torch_sympy_classes()
_MOD = (sympy.Mod, *_TORCH.get("mod", ()))
_FLOORDIV = _TORCH.get("floordiv", ())
_MAX = (sympy.Max, *_TORCH.get("max", ()))
_MIN = (sympy.Min, *_TORCH.get("min", ()))


class Translator:
    """Translate sympy integer expressions and guards into Z3 terms sharing one symbol table.

    Symbols become ``z3.Int`` constants named like the sympy symbol, so a Z3 model can be
    read back as ``{name: value}``. Raises :class:`Unsupported` on expressions outside the
    fragment described in the module docstring (non-integer rationals, floats, ...).
    """

    def __init__(self) -> None:
        self.symbols: dict[str, z3.ArithRef] = {}

    def term(self, e: int | sympy.Basic) -> z3.ArithRef:
        """The Z3 integer term of an int or a sympy integer expression."""
        if isinstance(e, bool):
            raise Unsupported(f"boolean where an integer was expected: {e!r}")
        if isinstance(e, int):
            return z3.IntVal(e)
        if not isinstance(e, sympy.Basic):
            raise Unsupported(f"not an integer expression: {type(e).__name__} {e!r}")
        if isinstance(e, sympy.Integer):
            return z3.IntVal(int(e))
        if isinstance(e, sympy.Symbol):
            name = e.name
            if name not in self.symbols:
                self.symbols[name] = z3.Int(name)
            return self.symbols[name]
        if isinstance(e, sympy.Add):
            return z3.Sum([self.term(a) for a in e.args])
        if isinstance(e, sympy.Mul):
            return z3.Product([self.term(a) for a in e.args])
        if isinstance(e, sympy.Pow):
            base, exp = e.args
            if isinstance(exp, sympy.Integer) and 0 <= int(exp) <= 64:
                return z3.Product([z3.IntVal(1)] + [self.term(base)] * int(exp))
            raise Unsupported(f"power with a non-constant or negative exponent: {e}")
        if isinstance(e, _MOD):
            a, b = (self.term(x) for x in e.args)
            return a % b
        if _FLOORDIV and isinstance(e, _FLOORDIV):
            a, b = (self.term(x) for x in e.args)
            return a / b
        if isinstance(e, _MAX) or isinstance(e, _MIN):
            terms = [self.term(x) for x in e.args]
            pick = (lambda x, y: x >= y) if isinstance(e, _MAX) else (lambda x, y: x <= y)
            acc = terms[0]
            for t in terms[1:]:
                acc = z3.If(pick(acc, t), acc, t)
            return acc
        raise Unsupported(f"unsupported expression {type(e).__name__}: {e}")

    def guard(self, g: sympy.Basic | bool) -> z3.BoolRef:
        """The Z3 boolean of a sympy relation or boolean combination (a shape guard)."""
        if g is True or g is sympy.true:
            return z3.BoolVal(True)
        if g is False or g is sympy.false:
            return z3.BoolVal(False)
        if isinstance(g, sympy.Eq):
            return self.term(g.lhs) == self.term(g.rhs)
        if isinstance(g, sympy.Ne):
            return self.term(g.lhs) != self.term(g.rhs)
        if isinstance(g, sympy.StrictLessThan):
            return self.term(g.lhs) < self.term(g.rhs)
        if isinstance(g, sympy.LessThan):
            return self.term(g.lhs) <= self.term(g.rhs)
        if isinstance(g, sympy.StrictGreaterThan):
            return self.term(g.lhs) > self.term(g.rhs)
        if isinstance(g, sympy.GreaterThan):
            return self.term(g.lhs) >= self.term(g.rhs)
        if isinstance(g, sympy.And):
            return z3.And([self.guard(a) for a in g.args])
        if isinstance(g, sympy.Or):
            return z3.Or([self.guard(a) for a in g.args])
        if isinstance(g, sympy.Not):
            return z3.Not(self.guard(g.args[0]))
        raise Unsupported(f"unsupported guard {type(g).__name__}: {g}")

    def guards(self, gs: Iterable[sympy.Basic | bool]) -> list[z3.BoolRef]:
        """Translate several guards."""
        return [self.guard(g) for g in gs]

    def env(self, model: z3.ModelRef) -> Mapping[str, int]:
        """The value of every translated symbol in ``model`` (unconstrained ones read as 0)."""
        return {
            name: model.eval(sym, model_completion=True).as_long()
            for name, sym in sorted(self.symbols.items())
            if not name.startswith("__")  # index variables are reported separately
        }


_local = threading.local()


def solver(timeout_ms: int) -> z3.Solver:
    """A per-thread Z3 solver, reset and set to ``timeout_ms``; reused to skip setup cost.

    The caller must not keep it across queries: the next call resets it.
    """
    s = getattr(_local, "solver", None)
    if s is None:
        s = z3.Solver()
        _local.solver = s
    s.reset()
    limit(s, timeout_ms)
    return s


#: Z3 resource units per millisecond of timeout for the backstop limit (:func:`limit`):
#: about 3,000 units/ms on the 2-core CI machine, so the backstop stops a query at about
#: 3x its timeout there, after the timer, which should have stopped it first.
_RLIMIT_PER_MS = 10_000


def limit(s: z3.Solver, timeout_ms: int) -> None:
    """Bound ``s``'s next checks by ``timeout_ms`` of wall time and, as a backstop, by a
    resource limit (``rlimit``, relative to what the solver has used so far). Z3's
    timeout is a timer thread that cancels the search; once, in CI, a 1 ms query
    (``test_tiny_timeout_is_unknown``: factoring a product of two primes) ran for over
    20 minutes, the timer never firing, and a signal-based test timeout cannot stop
    native code. The resource count is polled where the search works, with no thread."""
    s.set("timeout", int(timeout_ms))
    s.set("rlimit", min(_RLIMIT_PER_MS * max(1, int(timeout_ms)), 4_000_000_000))


@dataclass(frozen=True)
class Answer:
    """Raw answer of a Z3 layout query: ``result`` is "sat", "unsat" or "unknown".

    On "sat" the model is read back: index tuples and elements of both sides (``a`` is
    empty for a coverage query), the byte, and the symbol values ``env``.
    """

    result: str
    reason: str
    byte: int | None = None
    index_a: tuple[int, ...] = ()
    index_b: tuple[int, ...] = ()
    element_a: int | None = None
    element_b: int | None = None
    env: Mapping[str, int] = field(default_factory=dict)


class _Encoding:
    """Z3 index variables and element term of one layout (duck-typed: offset, sizes,
    strides, itemsize), with the constraints that bound the indices by the sizes."""

    def __init__(self, tr: Translator, lay: Any, tag: str) -> None:
        self.itemsize = lay.itemsize
        self.idx = [z3.Int(f"__{tag}{k}") for k in range(len(lay.sizes))]
        sizes = [tr.term(s) for s in lay.sizes]
        strides = [tr.term(s) for s in lay.strides]
        offset = tr.term(lay.offset)
        self.bounds = [z3.And(0 <= i, i < s) for i, s in zip(self.idx, sizes, strict=True)]
        # PyTorch sizes and offsets are never negative; a symbolic one must say so too.
        self.bounds += [
            s >= 0 for s, raw in zip(sizes, lay.sizes, strict=True) if not isinstance(raw, int)
        ]
        if not isinstance(lay.offset, int):
            self.bounds.append(offset >= 0)
        self.elem = z3.Sum([offset] + [i * s for i, s in zip(self.idx, strides, strict=True)])
        self.lo = self.elem * self.itemsize  # first byte of the indexed element

    def index(self, m: z3.ModelRef) -> tuple[int, ...]:
        return tuple(m.eval(i, model_completion=True).as_long() for i in self.idx)

    def element(self, m: z3.ModelRef) -> int:
        return m.eval(self.elem, model_completion=True).as_long()


def _check(s: z3.Solver, what: str) -> tuple[str, str, z3.ModelRef | None]:
    r = s.check()
    if r == z3.sat:
        return "sat", "z3: model", s.model()
    if r == z3.unsat:
        return "unsat", "z3: unsat", None
    return "unknown", f"z3 unknown ({s.reason_unknown()}) on {what}", None


def _sym_elem(lay: Any, tag: str) -> sympy.Expr:
    """The element of ``lay`` as a sympy expression over index symbols named like _Encoding's."""
    idx = [sympy.Symbol(f"__{tag}{k}", integer=True) for k in range(len(lay.sizes))]
    return sympy.sympify(lay.offset) + sum(
        (i * sympy.sympify(st) for i, st in zip(idx, lay.strides, strict=True)), sympy.Integer(0)
    )


def _index_range(expr: sympy.Expr, layouts: Sequence[Any]):
    """``(lo, hi, sizes)``: bounds of a linear integer combination of index symbols over the
    index box (sympy expressions, valid when every size in ``sizes`` is >= 1), or None when
    ``expr`` has any other symbol or a non-integer coefficient."""
    bounds = {}
    for tag, lay in zip("ab", layouts, strict=False):
        for k, size in enumerate(lay.sizes):
            bounds[f"__{tag}{k}"] = sympy.sympify(size)
    lo = hi = sympy.Integer(0)
    used = []
    for term, coeff in sympy.expand(expr).as_coefficients_dict().items():
        if not isinstance(coeff, sympy.Integer):
            return None
        if term == 1:
            lo, hi = lo + coeff, hi + coeff
        elif isinstance(term, sympy.Symbol) and term.name in bounds:
            size = bounds[term.name]
            used.append(size)
            span = coeff * (size - 1)
            lo, hi = (lo + span, hi) if coeff < 0 else (lo, hi + span)
        else:
            return None
    return sympy.expand(lo), sympy.expand(hi), used


def _monomials(diff: sympy.Expr) -> dict:
    """``{monomial: integer coefficient}`` of an expanded integer polynomial, else Unsupported."""
    coeffs = sympy.expand(diff).as_coefficients_dict()
    for mono, c in coeffs.items():
        ok = isinstance(c, sympy.Integer) and all(
            (base == 1 or isinstance(base, sympy.Symbol)) and isinstance(e, sympy.Integer)
            for base, e in mono.as_powers_dict().items()
        )
        if not ok:
            raise Unsupported(f"not an integer polynomial: {diff}")
    return coeffs


def _linear_in(coeffs: dict, sym: sympy.Symbol) -> tuple[sympy.Expr, sympy.Expr] | None:
    """``(A, B)`` with ``diff == A*sym + B`` and ``B`` free of ``sym``, or None."""
    a_terms, b_terms = [], []
    for mono, c in coeffs.items():
        deg = mono.as_powers_dict().get(sym, 0)
        if deg == 0:
            b_terms.append(c * mono)
        elif deg == 1:
            a_terms.append(c * mono / sym)
        else:
            return None
    return sympy.Add(*a_terms), sympy.Add(*b_terms)


@lru_cache(maxsize=4096)
def _radix_ok(
    sym: sympy.Symbol, lo: sympy.Expr, hi: sympy.Expr, used: tuple, guards: tuple
) -> bool:
    """Whether the guards (and sizes >= 1) prove ``-|sym| < lo`` and ``hi < |sym|``."""
    tr = Translator()
    z = tr.term(sym)
    absz = z3.If(z >= 0, z, -z)
    check = z3.Solver()
    limit(check, 50)
    check.add(*tr.guards(guards), *(tr.term(u) >= 1 for u in used))
    check.add(z3.Not(z3.And(tr.term(lo) > -absz, tr.term(hi) < absz)))
    return check.check() == z3.unsat


def _zero(diff: sympy.Expr, layouts: Sequence[Any], guards: tuple, tr: Translator, depth: int = 0):
    """A Z3 formula equivalent to ``diff == 0`` (under the guards) that avoids ``i*s`` terms.

    Mixed-radix argument: if ``diff = A*s + B`` with a shape symbol ``s``, ``B`` free of
    ``s`` and ``|B| < |s|`` for every index value, then ``diff == 0`` iff ``A == 0`` and
    ``B == 0``. If the guards prove ``|B| < |s|`` that is the whole answer; otherwise, when
    ``B`` has concrete bounds ``|B| <= m``, the few values ``|s| <= m`` are split off and
    substituted. This turns row-major symbolic layouts into linear problems that Z3 decides
    at once. Raises Unsupported when ``diff`` is not an integer polynomial (the caller then
    asserts ``diff == 0`` as is).
    """
    coeffs = _monomials(diff)
    names = {b for mono in coeffs for b in mono.as_powers_dict() if isinstance(b, sympy.Symbol)}
    for sym in sorted((x for x in names if not x.name.startswith("__")), key=lambda x: x.name):
        parts = _linear_in(coeffs, sym)
        rng = None if parts is None else _index_range(parts[1], layouts)
        if rng is None:
            continue
        a_part, b_part = parts
        lo, hi, used = rng
        z = tr.term(sym)

        def big(a_part=a_part, b_part=b_part):
            return z3.And(_zero(a_part, layouts, guards, tr, depth), tr.term(b_part) == 0)

        if _radix_ok(sym, lo, hi, tuple(used), guards):
            return big()
        if not (lo.is_Integer and hi.is_Integer) or depth >= 2:
            continue
        m = max(abs(int(lo)), abs(int(hi)))
        if m > 32:
            continue
        diff = sympy.Add(*(c * mono for mono, c in coeffs.items()))
        small = [
            z3.And(z == v, _zero(diff.subs(sym, v), layouts, guards, tr, depth + 1))
            for v in range(-m, m + 1)
        ]
        return z3.Or(z3.And(z3.Or(z > m, z < -m), big()), *small)
    return tr.term(sympy.Add(*(c * mono for mono, c in coeffs.items()))) == 0


def overlap_query(
    a: Any, b: Any, guards: Sequence[Any], timeout_ms: int, *, distinct: bool = False
) -> Answer:
    """Is there a byte shared by an element of ``a`` and one of ``b`` (same storage assumed)?

    With ``distinct=True`` (self-overlap, ``a is b``), the two index tuples must differ.
    """
    tr = Translator()
    try:
        ea, eb = _Encoding(tr, a, "a"), _Encoding(tr, b, "b")
        gs = tr.guards(guards)
    except Unsupported as exc:
        return Answer("unknown", f"unsupported: {exc}")
    s = solver(timeout_ms)
    s.add(*ea.bounds, *eb.bounds, *gs)
    if a.itemsize == b.itemsize:
        # equal-width elements share a byte iff they are the same element
        try:
            s.add(_zero(_sym_elem(a, "a") - _sym_elem(b, "b"), [a, b], tuple(guards), tr))
        except Unsupported:
            s.add(ea.elem == eb.elem)
    else:  # byte ranges [lo, lo + itemsize) intersect
        s.add(ea.lo < eb.lo + b.itemsize, eb.lo < ea.lo + a.itemsize)
    if distinct:
        s.add(z3.Or([x != y for x, y in zip(ea.idx, eb.idx, strict=True)] or [z3.BoolVal(False)]))
    result, reason, m = _check(s, "self-overlap" if distinct else "overlap")
    if m is None:
        return Answer(result, reason)
    xa, xb = ea.element(m), eb.element(m)
    byte = max(xa * a.itemsize, xb * b.itemsize)
    return Answer(result, reason, byte, ea.index(m), eb.index(m), xa, xb, tr.env(m))


def cover_query(a: Any, b: Any, guards: Sequence[Any], timeout_ms: int) -> Answer:
    """Is there a byte of ``b`` that no element of ``a`` covers (a ``ForAll`` over a's indices)?"""
    tr = Translator()
    try:
        ea, eb = _Encoding(tr, a, "a"), _Encoding(tr, b, "b")
        gs = tr.guards(guards)
    except Unsupported as exc:
        return Answer("unknown", f"unsupported: {exc}")
    byte = z3.Int("__byte")
    hit = z3.And(*ea.bounds, ea.lo <= byte, byte < ea.lo + a.itemsize)
    if a.itemsize == b.itemsize:
        # b's element is covered iff some element of a is the same element
        try:
            same = _zero(_sym_elem(a, "a") - _sym_elem(b, "b"), [a, b], tuple(guards), tr)
            hit = z3.And(*ea.bounds, same)
        except Unsupported:
            hit = z3.And(*ea.bounds, ea.elem == eb.elem)
    s = solver(timeout_ms)
    s.add(*eb.bounds, *gs, eb.lo <= byte, byte < eb.lo + b.itemsize)
    s.add(z3.ForAll(ea.idx, z3.Not(hit)) if ea.idx else z3.Not(hit))
    result, reason, m = _check(s, "coverage")
    if m is None:
        return Answer(result, reason)
    at = m.eval(byte, model_completion=True).as_long()
    return Answer(result, reason, at, (), eb.index(m), None, eb.element(m), tr.env(m))


def dense_cover_query(a: Any, b: Any, guards: Sequence[Any], timeout_ms: int) -> Answer:
    """Coverage when ``a`` is known to be row-major contiguous: is there a byte of ``b``
    outside ``a``'s byte interval ``[offset, offset + numel) * itemsize``? (no quantifier)"""
    tr = Translator()
    try:
        eb = _Encoding(tr, b, "b")
        lo = tr.term(a.offset) * a.itemsize
        hi = (
            tr.term(a.offset) + z3.Product([z3.IntVal(1)] + [tr.term(s) for s in a.sizes])
        ) * a.itemsize
        bounds = [tr.term(s) >= 0 for s in a.sizes if not isinstance(s, int)]
        gs = tr.guards(guards)
    except Unsupported as exc:
        return Answer("unknown", f"unsupported: {exc}")
    byte = z3.Int("__byte")
    s = solver(timeout_ms)
    s.add(*eb.bounds, *bounds, *gs, eb.lo <= byte, byte < eb.lo + b.itemsize)
    s.add(z3.Or(byte < lo, byte >= hi))
    result, reason, m = _check(s, "coverage of a dense view")
    if m is None:
        return Answer(result, reason)
    at = m.eval(byte, model_completion=True).as_long()
    return Answer(result, reason, at, (), eb.index(m), None, eb.element(m), tr.env(m))


class _Shape(NamedTuple):
    offset: Any
    sizes: tuple
    strides: tuple
    itemsize: int


_KINDS = {
    "overlap": overlap_query,
    "self": lambda a, b, g, t: overlap_query(a, b, g, t, distinct=True),
    "cover": cover_query,
    "dense-cover": dense_cover_query,
}


@lru_cache(maxsize=4096)
def _cached(kind: str, a: _Shape, b: _Shape, guards: tuple, timeout_ms: int) -> Answer:
    return _KINDS[kind](a, b, list(guards), timeout_ms)


def query(kind: str, a: Any, b: Any, guards: Sequence[Any], timeout_ms: int) -> Answer:
    """Run a query of ``kind`` (overlap, self, cover, dense-cover), memoized on the layouts'
    offset/sizes/strides/itemsize, the guards and the timeout (storage identity is the
    caller's business): the ground truth asks the same symbolic questions many times."""
    shape = lambda x: _Shape(x.offset, tuple(x.sizes), tuple(x.strides), x.itemsize)  # noqa: E731
    return _cached(kind, shape(a), shape(b), tuple(guards), timeout_ms)
