"""Minimizing a finding with Hypothesis's shrinker, every candidate re-executed in a worker.

A reduction of a program is one choice per *node* (:class:`_Plan`), each among options
ordered simplest first, the last being the original (the moves are those of :mod:`.reduce`):
per input, its layout (dense < own storage < as is, where a move applies) and whether it
still requires grad; per output, drop < keep; per statement, drop < bypass < canonical
rewrite < keep, each where the statement has it (a write: ``add_.Scalar`` on the argument it
wrote; a producer bypass cannot replace: ``clone`` < ``zeros``). A dropped statement takes
every later statement and output that uses it along (:func:`without_statement`); a bypassed
one leaves its users reading the argument it stood for; a rewritten one leaves them reading
the name it bound. :func:`reductions` is the Hypothesis strategy of those reduced programs
(an invalid one is rejected): a node of two options is a boolean, one of n > 2 options n - 1
booleans of which the first False picks its option (all True: the original), so
Hypothesis, shrinking toward False, tries the simplest first. Every boolean of a node is
drawn whatever the first False, so a node's choices keep their place in the sequence.

The draw order is the inputs, then the outputs, then the statements last to first,
because Hypothesis tries its simplifications roughly in draw order: an output or a late
statement is dropped alone (nothing uses it), an early one takes its dependents with it
and more often loses the failure (with drops only, this order needed 23 % fewer
executions than statements first to last).
An input move changes every candidate drawn after it, so when it succeeds late the body's
candidates run again on the new inputs; drawn first, it succeeds (it nearly always does)
before them. On the findings of two default campaigns (``bench/shrink.py``,
``bench/runs/shrink-2026-11-30.txt``) inputs first needed 2 % fewer executions than inputs
last, and booleans for two-way nodes 11 % fewer than integers everywhere (Hypothesis's
integer passes try more candidates), for the same program sizes. With the canonical
rewrites (nodes of up to four options), n - 1 booleans needed 13 % fewer executions than
one integer per node (1179 against 1356 on 53 findings of seeds 0 and 5) for the same
statements and the same distinct ``needed_features`` but one
(``bench/runs/shrink-canonical-2026-11-30.txt``).

:func:`shrink` starts Hypothesis from the finding itself: the choice sequence "keep
everything" is saved in an :class:`~hypothesis.database.InMemoryExampleDatabase` under the
``secondary`` key of a :func:`hypothesis.find`-like run (:func:`_find`) with
``phases=[Phase.reuse, Phase.shrink]``, so the reuse phase replays the original program
(one execution: a finding that no longer reproduces is kept unshrunk) and the shrink phase
minimizes it. The secondary key is where Hypothesis's own ``fuzz_one_input`` saves
failures found outside its engine for later shrinking; the primary key would not do: a
reused primary entry that is still interesting counts as already shrunk and ends the run
(``ConjectureRunner.reuse_existing_test_cases`` in hypothesis 6.170). Besides the public
API this relies on ``hypothesis.database.choices_to_bytes`` (the database's format), the
``.secondary`` key suffix and the ``_hypothesis_internal_database_key`` attribute that
``find`` sets; ``tests/unit/test_shrink.py`` fails if an upgrade changes them (the finding
would come back unshrunk).

The predicate runs every candidate through ``evaluate`` (a
:class:`~aliasfuzz.campaign.worker.Worker`, so crashes and hangs shrink like any other
finding) and compares with :func:`same_failure`. Identical candidates run once; after
``budget`` executions the predicate answers False without running anything, and
Hypothesis's five-minute shrinking limit is lifted (the budget bounds the work; a wall-clock
limit would make the result depend on the machine's speed). With a fixed seed and no
generation phase, the same finding and outcomes give the same minimized program.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aliasfuzz.campaign.reduce import (
    Canonicals,
    Targets,
    bypass_targets,
    canonical_forms,
    dense_storages,
    input_options,
    needed_features,
    reduce_inputs,
    reduce_program,
    statement_options,
)
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Program, StorageSpec

__all__ = [
    "is_valid",
    "keep_everything",
    "needed_features",
    "reduce_program",
    "reductions",
    "same_failure",
    "shrink",
    "unconfirmed_replay",
    "without_statement",
]

Evaluate = Callable[[Program], dict[str, Any]]

#: Hypothesis's database key of every shrink run (the database is private to one run).
_KEY = b"aliasfuzz-shrink"

#: Replaces ``MAX_SHRINKING_SECONDS`` (documented as monkeypatchable in the engine).
_NO_TIME_LIMIT = 7 * 24 * 3600


def same_failure(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether outcome ``b`` is the same failure as ``a``: the same verdict, and a failed
    check of the same class (:func:`aliasfuzz.oracle.differential.check_class`: a wrong
    value seen through an output or through the input it aliases is one failure)."""
    from aliasfuzz.oracle.differential import check_class

    return a.get("verdict") == b.get("verdict") and check_class(a.get("check")) == check_class(
        b.get("check")
    )


def without_statement(program: Program, index: int) -> Program:
    """``program`` without statement ``index`` and every later statement or output using it."""
    keep = [i != index for i in range(len(program.body))]
    return reduce_program(program, keep, [True] * len(program.outputs))


def is_valid(p: Program) -> bool:
    """Whether ``p`` validates (:meth:`Program.validate` raises nothing)."""
    try:
        p.validate()
    except InvalidArgument:
        return False
    return True


@dataclass(frozen=True)
class _Plan:
    """What :func:`reductions` draws for one program: per node, in draw order, its name
    (``("dynamic", "")``, ``("output", j)``, ``("statement", i)``, ``("layout", input)``,
    ``("grad", input)``)
    and its options simplest first, the last being the original."""

    nodes: tuple[tuple[tuple[str, Any], tuple[Any, ...]], ...]
    targets: Targets
    dense: dict[str, StorageSpec]
    canonicals: Canonicals
    encoding: str = "booleans"

    def keep_everything(self) -> list[bool | int]:
        """The choice sequence that draws the program itself (each node's last option)."""
        out: list[bool | int] = []
        for _, options in self.nodes:
            if len(options) == 2 or self.encoding == "booleans":
                out += [True] * (len(options) - 1)
            else:
                out.append(len(options) - 1)
        return out


#: How a node of more than two options is drawn: ``booleans``, one boolean per option but
#: the last, the first False picking its option (all True: the original); ``integers``, one
#: integer (the last: the original). A node of two options is one boolean either way.
ENCODINGS = ("booleans", "integers")


def _plan(
    program: Program,
    body_first: bool = False,
    canonical: bool = True,
    encoding: str = "booleans",
    static: bool = True,
) -> _Plan:
    """The nodes of ``program``: its inputs' first (unless ``body_first``), then its outputs
    and its statements from the last to the first; with the canonical rewrites unless
    ``canonical`` is False (``bench/shrink.py`` compares), drawn as ``encoding`` says."""
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}")
    try:
        targets = bypass_targets(program)
        dense = dense_storages(program)
        canonicals = canonical_forms(program) if canonical else ({},) * len(program.body)
    except InvalidArgument:  # every candidate is rejected anyway (the original included)
        targets, dense, canonicals = (None,) * len(program.body), {}, ({},) * len(program.body)
    inputs = [(("layout", name), o) for name, o in input_options(program, dense).items()]
    inputs += [
        (("grad", t.name), (False, True)) for t in program.inputs if t.requires_grad and not t.none
    ]
    live = [t.name for t in program.inputs if not t.none]
    if len(live) > 1:  # drop if unused (reduce_inputs decides on the reduced program)
        inputs += [(("input", name), (False, True)) for name in live]
    body = [(("output", j), (False, True)) for j in range(len(program.outputs))]
    options = statement_options(targets, canonicals)
    body += [(("statement", i), o) for i, o in enumerate(options)][::-1]
    # a program compiled with dynamic shapes (sources.mark_dynamic) first tries static ones
    # (unless ``static`` is False): audit 36's 502df9d4e6 was filed and reproduced with
    # dynamic=True, which its bug (a custom op writing a slice of an offset input) does not need
    dynamic = [(("dynamic", ""), (False, True))] if static and program.meta.get("dynamic") else []
    nodes = tuple(dynamic + (body + inputs if body_first else inputs + body))
    return _Plan(nodes, targets, dense, canonicals, encoding)


def _apply(program: Program, plan: _Plan, picks: dict[tuple[str, Any], Any]) -> Program:
    """The candidate ``picks`` (node name -> option) describes."""
    n = len(program.body)
    reduced = reduce_program(
        program,
        [picks[("statement", i)] for i in range(n)],
        [picks[("output", j)] for j in range(len(program.outputs))],
        plan.targets,
        plan.canonicals,
    )
    layouts = {name: o for (kind, name), o in picks.items() if kind == "layout"}
    drop_grad = [name for (kind, name), o in picks.items() if kind == "grad" and not o]
    unused = [name for (kind, name), o in picks.items() if kind == "input" and not o]
    out = reduce_inputs(reduced, layouts, drop_grad, plan.dense, unused)
    if picks.get(("dynamic", "")) is False:
        meta = {k: v for k, v in out.meta.items() if k != "dynamic"}
        out = Program(out.storages, out.inputs, out.body, out.outputs, meta)
    return out


def reductions(program: Program):
    """The Hypothesis strategy of valid reductions of ``program`` (see the module docstring).

    Draws, in this order: for a program compiled with dynamic shapes (``meta["dynamic"]``),
    whether it still is; per input that a layout move changes, its layout
    (:func:`~.reduce.input_options`: dense, own storage, keep), per input that requires
    grad whether it still does, and, when there are several live inputs, per input whether
    it stays once unused; per output keep or not; per statement from the last to the
    first its action (:func:`~.reduce.statement_options`: drop, bypass where it differs from
    drop, its canonical rewrites, keep). A choice of two is a boolean (True: the original),
    of n > 2 options n - 1 booleans, the first False picking its option (all True: the
    original); :func:`keep_everything` is the sequence that gives ``program`` itself. Draws
    that make an invalid program are rejected (``hypothesis.reject``).
    """
    return _strategy(program, _plan(program))


def _strategy(program: Program, plan: _Plan):
    from hypothesis import reject
    from hypothesis import strategies as st

    def check(candidate: Program) -> Program:
        if not is_valid(candidate):
            reject()
        return candidate

    def choose(draw, options: tuple[Any, ...]) -> Any:
        if len(options) == 2:
            return options[draw(st.booleans())]
        if plan.encoding == "integers":
            return options[draw(st.integers(0, len(options) - 1))]
        # every boolean is drawn, so a node's choices keep their length and place
        flags = [draw(st.booleans()) for _ in options[:-1]]
        return options[flags.index(False) if False in flags else -1]

    @st.composite
    def _reduced(draw) -> Program:
        picks = {name: choose(draw, options) for name, options in plan.nodes}
        return check(_apply(program, plan, picks))

    # A composite that draws nothing is deprecated: the empty plan's only value is the program.
    return _reduced() if plan.nodes else st.builds(check, st.just(program))


def keep_everything(program: Program) -> list[bool | int]:
    """The choice sequence for which :func:`reductions` draws ``program`` itself (what
    :func:`shrink` saves for the reuse phase; ``tests/unit/test_shrink.py`` pins it)."""
    return _plan(program).keep_everything()


def _lift_time_limit() -> None:
    from hypothesis.internal.conjecture import engine

    engine.MAX_SHRINKING_SECONDS = max(engine.MAX_SHRINKING_SECONDS, _NO_TIME_LIMIT)


def shrink(
    program: Program, outcome: dict[str, Any], evaluate: Evaluate, budget: int = 60,
    stop: Callable[[], bool] | None = None,
) -> tuple[Program, dict[str, Any], int]:
    """Minimize ``program``, whose run gave ``outcome``, with Hypothesis's shrinker.

    ``evaluate(candidate)`` runs a candidate on the finding's pipeline and returns its
    outcome dict (``verdict``, ``check``, ...); a candidate is interesting when
    :func:`same_failure` holds with ``outcome``. At most ``budget`` candidates are run
    (the original's replay included). Returns ``(smallest program found, its outcome,
    executions spent)``; ``(program, outcome, spent)`` when ``budget`` is 0, and when the
    original does not reproduce ``(program, outcome + {"unreproduced": replay}, spent)``,
    ``replay`` being the replay's ``verdict`` / ``check`` / ``explanation`` (the campaign
    does not write such a finding: :func:`aliasfuzz.campaign.driver.dismissal`). An
    exception raised by ``evaluate`` (a harness bug) ends the search and is re-raised.
    ``stop()`` true ends the search too, once the original's replay has run, with the
    smallest program found so far (the campaign's time budget spent: :class:`~.pool.Pool`).
    When the smallest program offers a canonical rewrite the original did not (a statement
    whose readers were dropped: a dead reader, a rebound producer), the rest of the budget
    shrinks it again with its own canonical forms.
    """
    # a crash is the same failure as another crash (same_failure): static shapes could trade
    # a dynamic-only crash (#122773's, while Dynamo traces) for another bug's
    static = outcome.get("verdict") not in ("crash", "timeout")
    plan = _plan(program, static=static)
    seen: dict[str, dict[str, Any]] = {}
    small, got, spent = _minimize(
        program, outcome, evaluate, budget, _strategy(program, plan), plan.keep_everything(),
        stop, seen,
    )
    if "unreproduced" in got or spent >= budget:
        return small, got, spent
    # a statement whose readers the first pass dropped is a dead reader (or a rebound
    # producer) only now: its canonical form was not offered, so the rest of the budget is
    # spent on the shrunk program's own plan (H100 campaign of 2026-12-06: 58917cdc15 kept a
    # slice_scatter of the second alias whose users had gone)
    again_plan = _plan(small, static=static)
    if not _rewrites(small, again_plan) - _rewrites(program, plan):
        return small, got, spent
    again, got2, spent2 = _minimize(
        small, got, evaluate, budget - spent, _strategy(small, again_plan),
        again_plan.keep_everything(), stop, seen,
    )
    if "unreproduced" in got2:  # the shrunk program failed to replay: keep the first pass's
        return small, got, spent + spent2
    return again, got2, spent + spent2


def _rewrites(program: Program, plan: _Plan) -> set[tuple[str, str, Any]]:
    """``(first bound name, canonical action, replacing statement)`` of every canonical
    rewrite ``plan`` (``program``'s) offers; none where ``program`` does not validate."""
    return {(st.out[0], act, op) for st, forms in zip(program.body, plan.canonicals, strict=True)
            for act, op in forms.items() if st.out}


def _minimize(
    program: Program,
    outcome: dict[str, Any],
    evaluate: Evaluate,
    budget: int,
    strategy,
    original: list[Any],
    stop: Callable[[], bool] | None = None,
    seen: dict[str, dict[str, Any]] | None = None,
) -> tuple[Program, dict[str, Any], int]:
    """:func:`shrink` with any strategy of reductions of ``program``; ``original`` is the
    choice sequence for which ``strategy`` draws ``program`` itself (``bench/shrink.py``
    runs former strategies through this). ``seen`` (program JSON -> outcome) holds the
    candidates an earlier pass ran, which are not run (nor counted) again."""
    from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes

    seen = {} if seen is None else seen
    spent = 0
    errors: list[Exception] = []

    def interesting(candidate: Program) -> bool:
        nonlocal spent
        key = candidate.dumps()
        if key not in seen:
            if spent >= budget or errors or (spent and stop is not None and stop()):
                return False
            spent += 1
            try:
                seen[key] = evaluate(candidate)
            except Exception as e:  # a harness bug, not a failure for Hypothesis to shrink
                errors.append(e)
                return False
        return same_failure(outcome, seen[key])

    db = InMemoryExampleDatabase()
    db.save(_KEY + b".secondary", choices_to_bytes(original))
    small = _find(strategy, interesting, db)
    if errors:
        raise errors[0]
    if small is None:
        replay = seen.get(program.dumps())
        if replay is None:  # not run (budget 0)
            return program, outcome, spent
        gave = {k: str(replay.get(k) or "")[:200] for k in ("verdict", "check", "explanation")}
        return program, {**outcome, "unreproduced": gave}, spent
    return small, seen[small.dumps()], spent


def unconfirmed_replay(outcome: dict[str, Any]) -> dict[str, Any] | None:
    """What the replay of a finding gave when it did not show the finding (the
    ``unreproduced`` mark :func:`shrink` sets), unless the replay died by a signal: a
    program whose compiled run breaks the process was not confirmed absent (the eighth
    audit's 4ceba35550, a heap corruption, labeled genuine). None: confirmed, or no mark."""
    gave = outcome.get("unreproduced")
    if not gave or str(gave.get("check") or "").startswith("signal:"):
        return None
    return gave


class _Found(Exception):
    """Raised by the test of :func:`_find` on an interesting value (Hypothesis's failure)."""


def _find(strategy, condition: Callable[[Any], bool], db) -> Any:
    """The minimal value of ``strategy`` satisfying ``condition``, or None if none is found.

    :func:`hypothesis.find` minus its randomness: ``find(random=...)`` applies
    ``@seed``, which turns the database off (and ``derandomize=True`` may not have one),
    so the seed is applied under the settings here. The shrinker draws from that random
    in a few passes; a fixed seed keeps the result a function of the outcomes alone.
    Like ``find``, the run uses database key ``_KEY`` through the attribute ``find`` sets.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

    _lift_time_limit()
    last: list[Any] = []

    @given(strategy)
    def test(value: Any) -> None:
        if condition(value):
            last[:] = [value]
            raise _Found

    config = settings(
        database=db,
        phases=[Phase.reuse, Phase.shrink],
        deadline=None,
        verbosity=Verbosity.quiet,
        print_blob=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    test = config(seed(0)(test))  # the seed first: it resets the database, config restores it
    test._hypothesis_internal_database_key = _KEY  # as hypothesis.find does
    try:
        test()
    except _Found:
        return last[0]
    return None

