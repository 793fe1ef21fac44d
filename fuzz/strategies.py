"""Program generation: the Hypothesis strategy :func:`programs` and its generator core.

One generator core, :func:`build_program`, draws a whole program through the
:class:`~aliasfuzz.fuzz.ops.core.Draw` protocol (``integer`` / ``boolean`` / ``choice`` /
``scalar``); the same ``Draw`` is handed to each registry row's ``gen``. Two back ends
drive it:

* :func:`programs` adapts Hypothesis (:class:`HypothesisDraw`): every draw is a
  Hypothesis draw, so failing programs shrink (fewer statements, earlier arguments,
  simpler layouts, smaller parameters);
* :mod:`aliasfuzz.fuzz.sample` adapts ``random.Random`` for the deterministic sampler and
  the campaign driver (Hypothesis's engine is not seed-stable across processes: it mixes
  in constants collected from whichever local modules happen to be imported).

Order of draws: inputs (storages and their views), then statements, then outputs. Rare
cases sit behind ``boolean`` draws that shrink toward False; choices shrink toward their
first option; after a first statement (always tried), the statement loop is a run of
"one more?" booleans, so the shrinker can delete any statement with its span of choices.

The generator is generic over the registry: every row with a ``gen`` in a requested
family is a candidate; each step is checked with the registry's own rules
(:func:`aliasfuzz.fuzz.validate.infer`) and retried a bounded number of times.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz._genadvindex import add_advindex
from aliasfuzz.fuzz._genautograd import AUTOGRAD_SHARE
from aliasfuzz.fuzz._geninputs import draw_inputs
from aliasfuzz.fuzz._genmeta import add_metadata
from aliasfuzz.fuzz._genoptional import add_optional
from aliasfuzz.fuzz.ir import DTYPES, Op, Program
from aliasfuzz.fuzz.limits import MAX_STATEMENTS
from aliasfuzz.fuzz.ops import REGISTRY, OpDef, OpKind, ValueMeta
from aliasfuzz.fuzz.ops.metadata import BASE_ONLY, OWN_STREAM, is_base
from aliasfuzz.fuzz.validate import infer

__all__ = [
    "ADVINDEX_SHARE",
    "DEFAULT_FAMILIES",
    "METADATA_SHARE",
    "FAMILIES",
    "DrawBase",
    "GenConfig",
    "GenStats",
    "HypothesisDraw",
    "OPTIONAL_SHARE",
    "build_program",
    "make_config",
    "programs",
]

#: Family name (the ``families`` option) -> registry kinds it covers.
FAMILIES: dict[str, tuple[OpKind, ...]] = {
    "view": (OpKind.VIEW,),
    "functional": (OpKind.FUNCTIONAL, OpKind.FACTORY),
    "inplace": (OpKind.INPLACE,),
    "out": (OpKind.OUT,),
    "scatter": (OpKind.SCATTER,),
    "custom": (OpKind.CUSTOM,),
    "triton": (OpKind.TRITON,),
    "control": (OpKind.CONTROL,),
}
DEFAULT_FAMILIES = ("view", "functional", "inplace", "out", "scatter", "custom", "triton")
_DEVICES = ("cpu", "cuda")
_FLOATS = ("float32", "float64", "float16", "bfloat16")
#: Scalars handed to rows' ``gen`` (first = shrink target). Exactly representable in fp16.
_FLOAT_SCALARS = (1.0, 2.0, 0.5, -1.0, 0.0, -2.5, 3.0)
#: Tries per statement (op, arguments, parameters) before the slot is left empty.
_ATTEMPTS = 6
#: "One more statement?" probability: mean ~5 statements under the default cap of 8.
_P_MORE = 0.9
_MAX_OUTPUTS = 3
_ARG_TRIES = 6
_PLACEHOLDERS = tuple(f"_r{i}" for i in range(64))
#: Default share of programs with an advanced-indexing statement (index tensors that are
#: program values): about 4 % of default programs hold one (``bench/coverage.py``'s target
#: is 2 %; a try that fits no value leaves the program as drawn).
ADVINDEX_SHARE = 0.05
#: Default share of programs given a statement of the metadata rows drawn on their own
#: stream (``resize_``, ``set_``, ``requires_grad_``, ...: :mod:`aliasfuzz.fuzz._genmeta`):
#: five rows whose tries fit about half the time, so that ``aliasfuzz sample -n 200`` shows
#: each of them (0.05 left two out of seed 1's 200).
METADATA_SHARE = 0.1
#: Default share of programs given an optional input and the ``None``-accepting statement
#: reading it (:mod:`aliasfuzz.fuzz._genoptional`; ``bench/coverage.py``'s target is 2 %).
OPTIONAL_SHARE = 0.05


# -- Draw back ends ----------------------------------------------------------------------
class DrawBase:
    """Shared ``scalar`` over the three primitive draws (``Draw`` protocol of the registry)."""

    def integer(self, lo: int, hi: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def boolean(self, p: float = 0.5) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def choice(self, options: Sequence[Any]) -> Any:
        """One of ``options`` (an ordered, non-empty sequence); backends implement ``_pick``."""
        if isinstance(options, set | frozenset | dict):
            # Their iteration order can depend on PYTHONHASHSEED: no stable choice.
            raise TypeError(f"choice needs an ordered sequence, got {type(options).__name__}")
        options = list(options)
        if not options:
            raise GenerationFailure("choice among no options")
        return self._pick(options)

    def _pick(self, options: list[Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def scalar(self, dtype: str) -> int | float | bool:
        """A small Python scalar of ``dtype``'s category (bool, int or float)."""
        if dtype == "bool":
            return self.boolean()
        if dtype in _FLOATS:
            return self.choice(_FLOAT_SCALARS)
        return self.integer(0 if dtype == "uint8" else -3, 3)


class HypothesisDraw(DrawBase):
    """:class:`Draw` over a Hypothesis ``draw`` (inside ``st.composite`` or ``st.data()``).

    ``integer`` shrinks toward ``lo``, ``boolean`` toward False, ``choice`` toward the
    first option. Empty ranges and empty choices raise :class:`GenerationFailure`.
    """

    def __init__(self, draw) -> None:
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        if lo > hi:
            raise GenerationFailure(f"empty integer range [{lo}, {hi}]")
        return lo if lo == hi else self._draw(st.integers(lo, hi))

    def boolean(self, p: float = 0.5) -> bool:
        if p <= 0:
            return False
        if p >= 1:
            return True
        if p == 0.5:
            return self._draw(st.booleans())
        # A weighted coin whose zero (the shrink target) is False.
        k = min(max(round(p * 1000), 1), 999)
        return self._draw(st.integers(0, 999)) >= 1000 - k

    def _pick(self, options: list[Any]) -> Any:
        return options[0] if len(options) == 1 else self._draw(st.sampled_from(options))


# -- options -----------------------------------------------------------------------------
@dataclass(frozen=True)
class GenConfig:
    """Validated generator options (see :func:`programs`); ``rows`` are (family, slots): a
    slot is a row, or a tuple of rows drawn as one choice (:func:`_slots`)."""

    max_statements: int
    families: tuple[str, ...]
    dtypes: tuple[str, ...]
    device: str
    aliased_inputs: bool
    max_inputs: int
    max_ndim: int
    max_size: int
    index_inputs: bool
    rows: tuple[tuple[str, tuple[OpDef | tuple[OpDef, ...], ...]], ...] = field(repr=False)
    #: share of sampled programs whose unwritten floating inputs require grad
    #: (:func:`aliasfuzz.fuzz.grads.mark_grad_leaves`; applied by :mod:`.sample` only)
    grad_share: float = 0.25
    #: share of programs given one advanced-indexing statement with program index tensors
    #: (:func:`aliasfuzz.fuzz._genadvindex.add_advindex`, drawn after the rest of the program)
    advindex_share: float = ADVINDEX_SHARE
    #: share of programs with ``requires_grad`` inputs given one autograd statement
    #: (:func:`aliasfuzz.fuzz._genautograd.add_autograd`; applied by :mod:`.sample` only,
    #: after the marking)
    autograd_share: float = AUTOGRAD_SHARE
    #: share of programs given one statement of the own-stream metadata rows
    #: (:func:`aliasfuzz.fuzz._genmeta.add_metadata`, drawn after the rest of the program)
    metadata_share: float = METADATA_SHARE
    #: share of programs given an ``Optional[Tensor]`` input read by a ``None``-accepting
    #: statement (:func:`aliasfuzz.fuzz._genoptional.add_optional`, drawn after metadata)
    optional_share: float = OPTIONAL_SHARE


def _int_opt(name: str, value: Any, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidArgument(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def _names_opt(name: str, value: Any, known: Sequence[str]) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise InvalidArgument(f"{name} must be a non-empty sequence of names, got {value!r}")
    bad = [v for v in value if v not in known]
    if bad:
        raise InvalidArgument(f"unknown {name} {bad!r}; known: {', '.join(known)}")
    return tuple(dict.fromkeys(value))


def make_config(
    *,
    max_statements: int = 8,
    families: Sequence[str] = DEFAULT_FAMILIES,
    dtypes: Sequence[str] = ("float32",),
    device: str = "cpu",
    aliased_inputs: bool = True,
    max_inputs: int = 3,
    max_ndim: int = 3,
    max_size: int = 4,
    index_inputs: bool = True,
    grad_share: float = 0.25,
    advindex_share: float = ADVINDEX_SHARE,
    autograd_share: float = AUTOGRAD_SHARE,
    metadata_share: float = METADATA_SHARE,
    optional_share: float = OPTIONAL_SHARE,
) -> GenConfig:
    """Check generator options and bind the registry rows they select.

    ``grad_share`` (0..1) is the share of programs :mod:`aliasfuzz.fuzz.sample` gives
    ``requires_grad`` leaves (:func:`aliasfuzz.fuzz.grads.mark_grad_leaves`, decided after
    the draw so that it changes no drawn op); the Hypothesis strategy :func:`programs` does
    not apply it. ``advindex_share`` (0..1) is the share of programs given an
    advanced-indexing statement whose index tensors are program inputs
    (:func:`aliasfuzz.fuzz._genadvindex.add_advindex`; needs ``index_inputs`` and the
    ``inplace`` or ``functional`` family). ``metadata_share`` (0..1) is the share given a
    ``resize_``, ``resize_as_``, ``set_``, ``set_.storage`` or ``requires_grad_`` statement
    (:func:`aliasfuzz.fuzz._genmeta.add_metadata`; needs the ``view`` family).
    ``autograd_share`` (0..1) is the share of programs with ``requires_grad`` inputs that
    :mod:`aliasfuzz.fuzz.sample` gives one autograd statement
    (:func:`aliasfuzz.fuzz._genautograd.add_autograd`, after the marking).
    ``optional_share`` (0..1) is the share of programs given an ``Optional[Tensor]`` input
    that only a ``None``-accepting statement reads
    (:func:`aliasfuzz.fuzz._genoptional.add_optional`; needs the ``functional`` family),
    the None-vs-tensor seam TorchScript's pipeline toggles between calls. Raises
    :class:`InvalidArgument` on a bad option,
    or when no registry row with a ``gen`` belongs to the requested families.
    """
    fams = _names_opt("families", families, tuple(FAMILIES))
    if device not in _DEVICES:
        raise InvalidArgument(f"device must be one of {_DEVICES}, got {device!r}")
    shares = (("grad_share", grad_share), ("advindex_share", advindex_share),
              ("metadata_share", metadata_share), ("autograd_share", autograd_share),
              ("optional_share", optional_share))
    for name, share in shares:
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0.0 <= share <= 1.0:
            raise InvalidArgument(f"{name} must be a number in [0, 1], got {share!r}")
    for flag, v in (("aliased_inputs", aliased_inputs), ("index_inputs", index_inputs)):
        if not isinstance(v, bool):
            raise InvalidArgument(f"{flag} must be a bool, got {v!r}")
    rows = tuple(
        (f, _slots(d for d in REGISTRY.values()
                   if d.gen is not None and d.kind in FAMILIES[f] and OWN_STREAM not in d.tags))
        for f in fams
    )
    rows = tuple((f, r) for f, r in rows if r)
    if not rows:
        raise InvalidArgument(f"no generatable registry op in families {list(fams)}")
    return GenConfig(
        max_statements=_int_opt("max_statements", max_statements, 0, MAX_STATEMENTS),
        families=fams,
        dtypes=_names_opt("dtypes", dtypes, tuple(DTYPES)),
        device=device,
        aliased_inputs=aliased_inputs,
        max_inputs=_int_opt("max_inputs", max_inputs, 1, 16),
        max_ndim=_int_opt("max_ndim", max_ndim, 0, 6),
        max_size=_int_opt("max_size", max_size, 1, 16),
        index_inputs=index_inputs,
        rows=rows,
        grad_share=float(grad_share),
        advindex_share=float(advindex_share),
        autograd_share=float(autograd_share),
        metadata_share=float(metadata_share),
        optional_share=float(optional_share),
    )


def _slots(rows) -> tuple[OpDef | tuple[OpDef, ...], ...]:
    """A family's rows as draw slots: rows tagged ``group:<name>`` share one slot (a tuple,
    in registry order), the others have one each, so that a family of many variants (the
    index family: 19 rows) adds one choice to each generator family instead of diluting
    the rows already there."""
    out: list = []
    groups: dict[str, list[OpDef]] = {}
    for d in rows:
        g = next((t[6:] for t in sorted(d.tags) if t.startswith("group:")), None)
        if g is None:
            out.append(d)
        elif g in groups:
            groups[g].append(d)
        else:
            groups[g] = [d]
            out.append(g)
    return tuple(tuple(groups[x]) if isinstance(x, str) else x for x in out)


@dataclass
class GenStats:
    """Counters filled by :func:`build_program`: accepted statements and rejected tries.

    ``rejected`` is keyed by ``(op, reason)`` where reason is the name of the one-eager-meaning
    rule that rejected the statement (``overlapping-writes``, ...: validate.RULE_NAMES), else
    the exception class name (``GenerationFailure``, ``InvalidArgument``) or ``no-arguments``.
    """

    accepted: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    empty_slots: int = 0


# -- statements --------------------------------------------------------------------------
def _arity(draw: DrawBase, d: OpDef) -> int:
    if isinstance(d.arity, int):
        return d.arity
    lo, hi = d.arity
    if "pairs" in d.tags:  # two lists of equal length (foreach list-list forms)
        return 2 * draw.integer(max(lo // 2, 1), min(hi, lo + 3) // 2)
    return draw.integer(lo, min(hi, lo + 3))


@functools.lru_cache(maxsize=256)
def _accepts(d: OpDef):
    """``d.accepts`` memoized on argument layouts (rows' filters are pure; layouts repeat)."""
    if d.accepts is None:
        return lambda metas: True
    return functools.lru_cache(maxsize=1 << 14)(lambda metas: bool(d.accepts(metas)))


def _draw_args(
    draw: DrawBase, d: OpDef, values: list[tuple[str, ValueMeta]]
) -> tuple[str, ...] | None:
    """Argument names for ``d`` (respecting ``accepts``), or None when none fit."""
    k = _arity(draw, d)
    if k == 0:
        return ()
    ok = _accepts(d)
    if BASE_ONLY in d.tags:  # only bases fit (validation refuses the rest)
        values = [(n, m) for n, m in values if is_base(n, m, set())]
        if not values:
            return None
    # Rejection sampling first (uniform over accepted tuples, cheap when most fit), then,
    # for ops whose arguments rarely fit (masks, scatter sources), enumerate when small.
    for _ in range(_ARG_TRIES):
        combo = [draw.choice(values) for _ in range(k)]
        if ok(tuple(m for _, m in combo)):
            return tuple(n for n, _ in combo)
    if len(values) ** k > 4096:
        return None
    combos = [c for c in itertools.product(values, repeat=k) if ok(tuple(m for _, m in c))]
    return tuple(n for n, _ in draw.choice(combos)) if combos else None


def _result_count(d: OpDef, metas: Sequence[ValueMeta], params: dict[str, Any]) -> int:
    """How many names a statement of ``d`` binds (``count_out`` for split/unbind rows)."""
    if d.n_out is not None:
        return d.n_out
    if d.count_out is not None:
        return d.count_out(metas, params)
    # Fallback for a row without ``count_out``: ``infer`` returns one meta per result.
    return len(d.infer(metas, params, _PLACEHOLDERS))


def _draw_statement(draw, cfg, prog: Program, values, next_name: int, stats):
    """One statement appended to ``prog``: (op, typed program), or None after the tries."""
    live = [(n, m) for n, m in values.items() if m is not None]
    for _ in range(_ATTEMPTS):
        _, rows = draw.choice(cfg.rows)
        d: OpDef = draw.choice(rows)
        if isinstance(d, tuple):  # a group's slot (see _slots)
            d = draw.choice(d)
        args = _draw_args(draw, d, live)
        if args is None:
            if stats is not None:
                stats.rejected[d.name, "no-arguments"] += 1
            continue
        metas = [values[a] for a in args]
        try:
            params = d.gen(draw, metas)
            k = _result_count(d, metas, params)
            op = Op(d.name, args, params, tuple(f"v{next_name + j}" for j in range(k)))
            typed = infer(prog.with_body((*prog.body, op)))
        except (GenerationFailure, InvalidArgument) as e:
            if stats is not None:
                stats.rejected[d.name, getattr(e, "rule", type(e).__name__)] += 1
            continue
        if stats is not None:
            stats.accepted[d.name] += 1
        return op, typed
    if stats is not None:
        stats.empty_slots += 1
    return None


def build_program(draw: DrawBase, cfg: GenConfig, stats: GenStats | None = None) -> Program:
    """Draw one program: inputs, then up to ``cfg.max_statements`` statements, then outputs.

    The program type-checks (:func:`~aliasfuzz.fuzz.validate.infer`) by construction.
    ``stats``, when given, counts accepted and rejected tries per op.
    """
    storages, inputs = draw_inputs(draw, cfg)
    prog = Program(storages, inputs, (), (), {"generator": "strategies", "device": cfg.device})
    typed = infer(prog)
    values = dict(typed.values)
    next_name = 0
    for i in range(cfg.max_statements):
        # The first statement is always tried: a program without one tests nothing.
        if i > 0 and not draw.boolean(_P_MORE):
            break
        got = _draw_statement(draw, cfg, prog, values, next_name, stats)
        if got is None:
            continue
        op, typed = got
        prog = prog.with_body((*prog.body, op))
        # a retired name (its tensor's metadata changed in place) may not be read again
        values = {n: m for n, m in typed.values.items() if n not in typed.retired}
        next_name += len(op.out)
    # Outputs: distinct values, most recent first (the shrink target is "return the last"),
    # none that validation forbids returning (a stale as_strided view, layout-readout).
    names = [n for n, m in reversed(values.items()) if m is not None and n not in typed.unreturnable]
    outputs: list[str] = []
    for _ in range(draw.integer(0, min(_MAX_OUTPUTS, len(names)))):
        pick = draw.choice([n for n in names if n not in outputs])
        outputs.append(pick)
    return prog.with_body(prog.body, tuple(outputs))


def programs(
    *,
    max_statements: int = 8,
    families: Sequence[str] = DEFAULT_FAMILIES,
    dtypes: Sequence[str] = ("float32",),
    device: str = "cpu",
    aliased_inputs: bool = True,
    max_inputs: int = 3,
    max_ndim: int = 3,
    max_size: int = 4,
    index_inputs: bool = True,
    advindex_share: float = ADVINDEX_SHARE,
    metadata_share: float = METADATA_SHARE,
    optional_share: float = OPTIONAL_SHARE,
) -> st.SearchStrategy[Program]:
    """A Hypothesis strategy of valid programs (they type-check; eager should run them).

    Options (keyword-only, checked now; :class:`InvalidArgument` on a bad one):
      max_statements: at most this many statements (0 to ``limits.MAX_STATEMENTS``).
      families: op families to draw from, names of :data:`FAMILIES`.
      dtypes: dtypes of the data inputs' storages (names of ``ir.DTYPES``).
      device: ``"cpu"`` or ``"cuda"``; recorded in ``meta["device"]``.
      aliased_inputs: allow several inputs on one storage (overlapping or not).
      max_inputs: data inputs per program (1..16); an extra mask/index input may follow.
      max_ndim, max_size: input rank and per-dimension size bounds.
      index_inputs: sometimes (1 in 4) add a bool mask or an int64 input with values 0/1,
        and (``advindex_share`` of programs) an advanced-indexing statement with index
        tensor inputs of known contents (:mod:`aliasfuzz.fuzz._genadvindex`).
      advindex_share: that share (0..1); the boolean deciding it shrinks toward False.
      metadata_share: the share (0..1) given a ``resize_``, ``resize_as_``, ``set_``,
        ``set_.storage`` or ``requires_grad_`` statement (:mod:`aliasfuzz.fuzz._genmeta`).
      optional_share: the share (0..1) of programs given an ``Optional[Tensor]`` input read
        by a ``None``-accepting statement (:mod:`aliasfuzz.fuzz._genoptional`).
    """
    cfg = make_config(
        max_statements=max_statements,
        families=families,
        dtypes=dtypes,
        device=device,
        aliased_inputs=aliased_inputs,
        max_inputs=max_inputs,
        max_ndim=max_ndim,
        max_size=max_size,
        index_inputs=index_inputs,
        advindex_share=advindex_share,
        metadata_share=metadata_share,
        optional_share=optional_share,
    )
    return _programs(cfg)


@st.composite
def _programs(draw, cfg: GenConfig) -> Program:
    d = HypothesisDraw(draw)
    return add_optional(add_metadata(add_advindex(build_program(d, cfg), d, cfg), d, cfg), d, cfg)
