"""Inductor's Triton mutation analysis against the true footprint of each kernel launch.

Functionalization turns a user Triton launch into ``triton_kernel_wrapper_functional``
whose ``tensors_to_clone`` lists the arguments Inductor believes the kernel writes
(``torch/_higher_order_ops/triton_kernel_wrap.py``: ``triton_kernel_wrapper_mutation_
functionalize`` -> ``get_mutated_tensors`` -> ``identify_accessed_tensors``, which lowers
the kernel to TTIR with ``generate_ttir`` and walks back from every ``tt.store`` /
``tt.atomic_*`` / descriptor store to the pointer parameters: ``analyze_kernel_access``
on torch 2.13, ``analyze_kernel_mutations`` on older releases). Any exception in that
chain is caught and the analysis falls back to "every tensor argument is mutated", with
one WARNING ``Encountered an exception in identify_accessed_tensors, assuming every input
is mutated`` (with the traceback) on the ``torch._dynamo`` logger; releases before the
access analysis name ``identify_mutated_tensors`` there. This module catches that record
to tell the fallback from a kernel that really writes everything (and keeps it off the
console: the pipeline's own trace logs it again).
Constructs that trigger it (checked on torch 2.13.0 / triton 3.7.1): a parameter with a
default value the launch leaves out (``generate_ttir``: "Incorrect number of arguments"),
``tl.map_elementwise`` (``ttir_to_functions``: "Unknown blocked function"), impure
``tl.inline_asm_elementwise`` ("ttir analysis hit an op we do not know how to analyze"),
no active Triton driver (a CPU machine without :mod:`aliasfuzz.fuzz.triton_compat`).

:func:`analyse_program` calls that analysis the way functionalization does, for every
launch statement (:class:`~aliasfuzz.fuzz.ops.OpKind` ``TRITON``) of a program: the real
kernel object, registered in ``kernel_side_table``, with the launch's arguments bound to
the kernel's parameter names as ``TritonHOPifier.call_triton_kernel`` binds them (tensors
as FakeTensors of the launch's layouts, scalars and constexprs by value: the static-shape
trace). The launch is found through the OpDef interface only: the row's ``render`` is
evaluated with the kernel replaced by a recorder. The module global
``get_mutated_tensors`` is looked up at each call, so plugins and mutants that patch it
(or ``identify_accessed_tensors``) are what is measured. On CPU the analysis runs on the
fake sm_90 target of :mod:`aliasfuzz.fuzz.triton_compat`; with CUDA, on the real driver.

The true footprint is the row's ``writes`` on the launch's argument layouts: one written
layout per ``mutates`` index, in order (a layout with no element: nothing written by this
launch); when a row returns another number of layouts (``[]``: no write), the kernel
library's replay (``kernels.accesses``) names the argument of each store, or, for rows
without one, layouts are matched to mutated arguments by storage. Each tensor argument is then :data:`AGREE`, :data:`UNDER_CLAIM` (written, claimed
not written: functionalization drops the write, a miscompile risk), :data:`OVER_CLAIM`
(claimed written, never written by this launch: a needless clone), or :data:`FALLBACK`
(not written, claimed because the analysis gave up; written arguments under a fallback
are :data:`AGREE`). :func:`judge_launches` turns that into the oracle's
``kernel-analysis`` check (rules in ``oracle/README.md``).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from aliasfuzz.errors import one_line
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import OpDef, OpKind, ValueMeta
from aliasfuzz.fuzz.ops.core import ENUM_LIMIT
from aliasfuzz.oracle import confirm as _confirm
from aliasfuzz.oracle.differential import Check
from aliasfuzz.oracle.verdict import Verdict

__all__ = [
    "AGREE",
    "FALLBACK",
    "OVER_CLAIM",
    "RELIANT_PIPELINES",
    "UNDER_CLAIM",
    "ArgAccess",
    "InductorClaim",
    "LaunchReport",
    "analyse_launch",
    "analyse_program",
    "clear_cache",
    "inductor_claim",
    "judge_launches",
]

AGREE = "agree"
UNDER_CLAIM = "under-claim"
OVER_CLAIM = "over-claim"
FALLBACK = "fallback"

#: Pipelines whose functionalization of user kernels relies on the analysis.
RELIANT_PIPELINES = frozenset({"aot_eager", "inductor", "inductor-reinplace", "fx-reinplace"})
#: Of those, the ones whose reinplace pass may drop a clone of ``tensors_to_clone``.
_REINPLACING = frozenset({"inductor", "inductor-reinplace"})
_TRITON_KIND = "triton_kernel_wrapper_functional"
_MODULE = "torch._higher_order_ops.triton_kernel_wrap"
_FALLBACK_MESSAGE = re.compile(r"Encountered an exception in identify_\w+_tensors")
_MAX_CONFIRMATIONS = 2


@dataclass(frozen=True)
class InductorClaim:
    """What ``get_mutated_tensors`` answered for one launch.

    ``written``: the kernel parameter names it lists (``tensors_to_clone``); ``fell_back``:
    whether ``identify_accessed_tensors`` caught an exception and assumed every tensor
    argument mutated (``reason``: that exception, one line).
    """

    written: tuple[str, ...]
    fell_back: bool
    reason: str = ""


@dataclass(frozen=True)
class ArgAccess:
    """One tensor argument of a launch: truth, claim and class.

    ``index``: position among the statement's tensor arguments; ``value``: the program
    value passed; ``param``: the kernel parameter bound to it; ``written_bytes``: bytes of
    its storage this launch writes through it (0: none); ``claimed``: in Inductor's list;
    ``status``: one of :data:`AGREE`, :data:`UNDER_CLAIM`, :data:`OVER_CLAIM`,
    :data:`FALLBACK`; ``storage``: the storage the value lives on (program storage or
    allocating statement's name).
    """

    index: int
    value: str
    param: str
    written_bytes: int
    claimed: bool
    status: str
    storage: str = ""


@dataclass(frozen=True)
class LaunchReport:
    """The comparison for one launch statement (``statement``: its index in the body).

    ``error`` is set (and ``args`` empty) when the claim could not be computed, e.g. a
    row whose rendering does not launch a kernel.
    """

    statement: int
    op: str
    kernel: str
    args: tuple[ArgAccess, ...] = ()
    fell_back: bool = False
    reason: str = ""
    error: str = ""

    def with_status(self, status: str) -> list[ArgAccess]:
        """The arguments of one class."""
        return [a for a in self.args if a.status == status]


# -- the launch, through the OpDef interface ---------------------------------------------
class _Recorder:
    """Stands for a kernel in a rendered launch: ``kernel[grid](*args, **kw)`` is recorded."""

    def __init__(self, kernel: Any):
        self.kernel = kernel
        self.calls: list[tuple[Any, tuple, dict]] = []

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        def call(*args: Any, **kwargs: Any) -> None:
            self.calls.append((grid, args, kwargs))

        return call


def _is_kernel(obj: Any) -> bool:
    return hasattr(obj, "arg_names") or hasattr(getattr(obj, "fn", None), "arg_names")


def _arg_names(kernel: Any) -> list[str]:
    names = getattr(kernel, "arg_names", None)
    return list(names if names is not None else kernel.fn.arg_names)


def _fake_args(metas: Sequence[ValueMeta]) -> list[torch.Tensor]:
    """FakeTensors with the launch's layouts, one per argument position (aliasing kept)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    def span(m: ValueMeta) -> int:
        if m.numel == 0:
            return m.offset
        return m.offset + sum((n - 1) * st for n, st in zip(m.shape, m.stride, strict=True)) + 1

    sizes: dict[tuple[str, str], int] = {}
    for m in metas:  # one base per storage and dtype, large enough for every view of it
        k = (m.storage, m.dtype)
        sizes[k] = max(sizes.get(k, 0), m.storage_nbytes // m.itemsize, span(m))
    with FakeTensorMode():
        bases = {k: torch.empty(n, dtype=getattr(torch, k[1])) for k, n in sizes.items()}
        return [bases[(m.storage, m.dtype)].as_strided(m.shape, m.stride, m.offset) for m in metas]


def _bind(d: OpDef, tensors: Sequence[torch.Tensor], params: dict) -> tuple[Any, dict, str]:
    """Evaluate the row's rendering with its kernel recorded: ``(kernel, kwargs, name)``,
    ``kwargs`` bound to parameter names as ``TritonHOPifier.call_triton_kernel`` does."""
    from aliasfuzz.fuzz import preludes

    names = [f"_aliasfuzz_arg{i}" for i in range(len(tensors))]
    scope: dict[str, Any] = {"torch": torch, **dict(zip(names, tensors, strict=True))}
    recorders = []
    for p in d.prelude:
        obj = getattr(preludes, p)
        if _is_kernel(obj):
            obj = _Recorder(obj)
            recorders.append((p, obj))
        scope[p] = obj
    exec(compile(d.render(names, params), f"<launch {d.name}>", "exec"), scope)  # noqa: S102
    calls = [(p, r.kernel, c) for p, r in recorders for c in r.calls]
    if len(calls) != 1:
        raise ValueError(f"{d.name}: the rendering launches {len(calls)} kernels, not one")
    name, kernel, (_grid, args, kwargs) = calls[0]
    return kernel, {**dict(zip(_arg_names(kernel), args, strict=False)), **kwargs}, name


# -- Inductor's claim --------------------------------------------------------------------
class _CatchFallback(logging.Filter):
    """Keeps (and silences) the analysis's fallback warning; lets other records pass."""

    def __init__(self) -> None:
        super().__init__()
        self.reasons: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if not _FALLBACK_MESSAGE.search(str(record.msg)):
            return True
        e = record.exc_info[1] if record.exc_info else None
        self.reasons.append(one_line(e) if e is not None else "no exception recorded")
        return False


@contextlib.contextmanager
def _fallback_watch() -> Iterator[_CatchFallback]:
    log = logging.getLogger("torch._dynamo")
    catch = _CatchFallback()
    old_level = log.level
    if not log.isEnabledFor(logging.WARNING):
        # the fallback must be seen even where TORCH_LOGS quietens dynamo
        log.setLevel(logging.WARNING)
    log.addFilter(catch)
    try:
        yield catch
    finally:
        log.removeFilter(catch)
        log.setLevel(old_level)


def inductor_claim(kernel: Any, kwargs: dict[str, Any]) -> InductorClaim:
    """Call ``get_mutated_tensors`` on ``kernel`` with ``kwargs`` as functionalization does.

    ``kwargs``: every launch argument by parameter name (tensors, ideally FakeTensors,
    scalars, constexprs). Mirrors ``triton_kernel_wrapper_mutation_functionalize``
    (torch 2.11-2.13): the kernel is added to ``kernel_side_table``, the arguments go in
    ``kwargs`` with empty constant args and no TMA descriptors. On a machine without CUDA
    the fake-target layer is enabled first. Raises
    :class:`~aliasfuzz.passes.hygiene.HookNotFound` if the function moved; exceptions of
    the analysis itself are its fallback, reported in the result.
    """
    from aliasfuzz.fuzz import process
    from aliasfuzz.passes.hygiene import resolve

    process.setup()
    table = resolve(_MODULE, "kernel_side_table")
    get_mutated = resolve(_MODULE, "get_mutated_tensors")
    call = [table.add_kernel(kernel), table.add_constant_args({}), kwargs]
    if _takes_tma(get_mutated):
        call.append({})
    # Inductor's own analysis is a system under test: a death inside it is PyTorch's
    with _fallback_watch() as catch, process.system_under_test("triton mutation analysis"):
        written = get_mutated(*call)
    return InductorClaim(tuple(written), bool(catch.reasons), "; ".join(catch.reasons))


def _takes_tma(get_mutated: Callable) -> bool:
    """Whether ``get_mutated_tensors`` takes ``tma_descriptor_metadata`` (torch >= 2.6),
    read through a plugin's ``*args`` wrapper from the functional wrapper's signature."""
    dense = getattr(
        importlib.import_module(_MODULE), "triton_kernel_wrapper_functional_dense", None
    )
    for f in (get_mutated, dense):
        if f is None:
            continue
        ps = inspect.signature(f).parameters.values()
        if not any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in ps):
            return any(p.name == "tma_descriptor_metadata" for p in ps)
    return True


_CACHE: dict[tuple, Any] = {}  # (row, layouts, params, hooks) -> _Compared
_CLAIMS: dict[tuple, InductorClaim] = {}  # (kernel, dtypes and values, hooks) -> claim


def clear_cache() -> None:
    """Forget cached comparisons and claims (kept per process; see :func:`analyse_launch`)."""
    _CACHE.clear()
    _CLAIMS.clear()


def _key(d: OpDef, metas: Sequence[ValueMeta], params: dict) -> tuple:
    from aliasfuzz.fuzz import preludes

    storages: dict[str, int] = {}
    layout = tuple(
        (
            m.dtype,
            m.shape,
            m.stride,
            m.offset,
            m.storage_nbytes,
            storages.setdefault(m.storage, len(storages)),
        )
        for m in metas
    )
    tkw = importlib.import_module(_MODULE)
    # the analysis functions installed now (a plugin may patch them); names vary by release
    hooks = tuple(
        getattr(tkw, n, None)
        for n in ("get_mutated_tensors", "identify_accessed_tensors", "identify_mutated_tensors")
    )
    kernels = tuple(id(getattr(preludes, p)) for p in d.prelude)
    return (d.name, kernels, layout, repr(sorted(params.items())), hooks)


# -- the comparison ----------------------------------------------------------------------
def _written_bytes(d: OpDef, metas: Sequence[ValueMeta], params: dict) -> list[int]:
    """Bytes each argument position is written through by this launch (the row's truth)."""
    written = d.written(metas, params)
    mutated = d.mutated_indices(len(metas))
    if len(written) == len(mutated):
        pairs = [((i,), w) for i, w in zip(mutated, written, strict=True)]
    else:
        replayed = _replayed_writes(d, metas, params)
        if replayed is not None:
            return replayed
        pairs = [(tuple(i for i in mutated if metas[i].storage == w.storage), w) for w in written]
    per_arg: list[set[int] | int] = [set() for _ in metas]
    for idx, w in pairs:
        if w.numel == 0:
            continue
        for i in idx:
            if w.numel <= ENUM_LIMIT and isinstance(per_arg[i], set):
                per_arg[i] |= w.byte_footprint()
            else:
                per_arg[i] = w.numel * w.itemsize
    return [len(b) if isinstance(b, set) else b for b in per_arg]


def _replayed_writes(d: OpDef, metas: Sequence[ValueMeta], params: dict) -> list[int] | None:
    """Per-argument written bytes from the kernel library's replay (``kernels.accesses``),
    which names the argument of every store; None for rows without one. Used only when the
    row's written layouts do not line up with its ``mutates`` one for one."""
    from aliasfuzz.errors import InvalidArgument
    from aliasfuzz.fuzz.ops import kernels

    try:
        stores = {(a.arg, a.element) for a in kernels.accesses(d.name, metas, params) if a.write}
    except InvalidArgument:
        return None
    return [sum(1 for arg, _ in stores if arg == i) * m.itemsize for i, m in enumerate(metas)]


@dataclass(frozen=True)
class _Compared:
    """What a launch's comparison depends on only through the cache key."""

    kernel: str
    params: tuple[str, ...]  # the kernel parameter bound to each argument position
    nbytes: tuple[int, ...]
    claim: InductorClaim


class _Unbound(Exception):
    """The row's rendering does not make exactly one kernel call we can bind."""


def _compare(d: OpDef, metas: Sequence[ValueMeta], params: dict, key: tuple) -> _Compared:
    tensors = _fake_args(metas)
    try:
        kernel, kwargs, kname = _bind(d, tensors, params)
    except Exception as e:  # a row outside the launch convention: nothing to compare
        raise _Unbound(one_line(e)) from e
    param_of = {id(v): k for k, v in kwargs.items() if isinstance(v, torch.Tensor)}
    return _Compared(
        kname,
        tuple(param_of.get(id(t), "") for t in tensors),
        tuple(_written_bytes(d, metas, params)),
        _cached_claim(kernel, kwargs, key[-1]),
    )


def _cached_claim(kernel: Any, kwargs: dict[str, Any], hooks: tuple) -> InductorClaim:
    # generate_ttir replaces every FakeTensor by torch.empty(2, dtype): the claim depends on
    # the tensors' dtypes and the other arguments' values only, not on layouts
    sig = tuple(
        (k, "tensor", str(v.dtype))
        if isinstance(v, torch.Tensor)
        else (k, type(v).__name__, repr(v))
        for k, v in kwargs.items()
    )
    key = (id(kernel), sig, hooks)
    if key not in _CLAIMS:
        _CLAIMS[key] = inductor_claim(kernel, kwargs)
    return _CLAIMS[key]


def analyse_launch(
    d: OpDef,
    metas: Sequence[ValueMeta],
    params: dict,
    *,
    statement: int = 0,
    values: Sequence[str] | None = None,
) -> LaunchReport:
    """Compare Inductor's claim with the true footprint for one launch of row ``d``.

    ``metas``: the layouts of the statement's tensor arguments (from
    :func:`aliasfuzz.fuzz.validate.infer`); ``params``: its parameters; ``statement`` and
    ``values`` (the program value names) label the report. Cached for the process: the
    comparison per (row, kernel objects, argument layouts and aliasing, parameters,
    installed analysis functions), Inductor's claim per (kernel, tensor dtypes and other
    argument values, installed analysis functions). Raises :class:`ValueError` if ``d`` is not a Triton
    launch row; a launch that cannot be bound comes back with ``error`` set.
    """
    if d.kind is not OpKind.TRITON:
        raise ValueError(f"{d.name} is not a Triton launch row ({d.kind})")
    values = list(values) if values is not None else [f"arg{i}" for i in range(len(metas))]
    key = _key(d, metas, params)
    got = _CACHE.get(key)
    if got is None:
        try:
            got = _CACHE[key] = _compare(d, metas, params, key)
        except _Unbound as e:
            return LaunchReport(statement, d.name, "", error=f"launch not bound: {e}")
    claim = got.claim
    args = []
    for i, (param, nbytes) in enumerate(zip(got.params, got.nbytes, strict=True)):
        claimed = param in claim.written
        if nbytes and not claimed:
            status = UNDER_CLAIM
        elif claimed and not nbytes:
            status = FALLBACK if claim.fell_back else OVER_CLAIM
        else:
            status = AGREE
        args.append(ArgAccess(i, values[i], param, nbytes, claimed, status, metas[i].storage))
    return LaunchReport(statement, d.name, got.kernel, tuple(args), claim.fell_back, claim.reason)


def analyse_program(program: Program) -> list[LaunchReport]:
    """One :class:`LaunchReport` per Triton launch statement of ``program``, in order.

    Raises :class:`~aliasfuzz.errors.InvalidArgument` if the program does not type-check.
    """
    from aliasfuzz.fuzz.validate import infer

    return [
        analyse_launch(s.opdef, s.args, s.op.params, statement=s.index, values=s.op.args)
        for s in infer(program).steps
        if s.opdef.kind is OpKind.TRITON
    ]


# -- the oracle's check ------------------------------------------------------------------
def judge_launches(
    j: Any,
    program: Program,
    run: Callable[[tuple], Any],
    fn: Callable,
    names: Sequence[str],
    make: Callable[[], tuple],
    confirm: bool = True,
) -> None:
    """The ``kernel-analysis`` check of judgement ``j`` (updated in place), for programs
    with launches under :data:`RELIANT_PIPELINES`; the rules are in ``oracle/README.md``.

    * an under-claim is a miscompile the failed differential check already shows, or one
      confirmed on random refills of the inputs; unconfirmed, the run is ``unknown``;
    * a fallback whose needless clone a reinplacing pipeline kept is ``missed-reinplace``
      when forcing that argument in place agrees with eager (unconfirmed: ``unknown``);
    * other over-claims and fallbacks are counted notes in ``j.filtered``.

    Appends a :class:`~aliasfuzz.oracle.differential.Check` named ``kernel-analysis`` and
    sets ``j.kernel_analysis`` to the reports. ``run(inputs) -> EagerResult`` runs the
    pipeline; ``fn``, ``names`` and ``make`` are the eager program, its input names and a
    maker of fresh inputs (as in :func:`aliasfuzz.oracle.judge.judge`).
    """
    if j.pipeline not in RELIANT_PIPELINES:
        return
    reports = analyse_program(program)
    if not reports:
        return
    j.kernel_analysis = reports
    for r in reports:
        if r.error:
            j.filtered.append(f"kernel-analysis: statement {r.statement} ({r.op}) {r.error}")
        for a in r.with_status(OVER_CLAIM):
            j.filtered.append(
                f"kernel-analysis over-claim: {_where(r, a)} claimed written, "
                "not written by this launch (the analysis is a static may-write)"
            )
    ctx = _Ctx(j, run, fn, names, make, confirm)
    outcomes = [
        _judge_under(ctx, reports),
        _judge_stale(ctx, reports),
        _judge_fallbacks(ctx, reports),
    ]
    verdict, message = min(outcomes, key=lambda o: o[0].severity)
    if verdict is Verdict.OK:
        message = _summary(reports)
    elif verdict is Verdict.UNKNOWN and j.verdict is Verdict.OK:
        j.verdict, j.check, j.explanation = verdict, "kernel-analysis", message
    j.checks.append(Check("kernel-analysis", verdict, message))


@dataclass
class _Ctx:
    j: Any
    run: Callable[[tuple], Any]
    fn: Callable
    names: Sequence[str]
    make: Callable[[], tuple]
    confirm: bool


def _where(r: LaunchReport, a: ArgAccess) -> str:
    return f"statement {r.statement} {r.kernel}({a.param}={a.value})"


def _summary(reports: list[LaunchReport]) -> str:
    counts = {
        s: sum(len(r.with_status(s)) for r in reports)
        for s in (AGREE, UNDER_CLAIM, OVER_CLAIM, FALLBACK)
    }
    return f"{len(reports)} launch(es): " + ", ".join(f"{n} {s}" for s, n in counts.items())


def _judge_under(ctx: _Ctx, reports: list[LaunchReport]) -> tuple[Verdict, str]:
    j = ctx.j
    under = [(r, a) for r in reports for a in r.with_status(UNDER_CLAIM)]
    if not under:
        return Verdict.OK, ""
    what = "; ".join(
        f"{_where(r, a)} writes {a.written_bytes} B, claimed not written" for r, a in under
    )
    if j.verdict is Verdict.MISCOMPILE:
        msg = f"under-claim: {what}; the {j.check} check shows the difference"
        j.explanation += f" (kernel-analysis {msg})"
        return Verdict.MISCOMPILE, msg
    if j.verdict in (Verdict.CRASH, Verdict.TIMEOUT) or not ctx.confirm:
        return Verdict.UNKNOWN, f"under-claim not confirmed (no run to compare): {what}"
    c = _confirm.confirm_unsafe(ctx.run, ctx.fn, ctx.names, _confirm.input_variants(ctx.make, 2))
    if not c.confirmed:
        return Verdict.UNKNOWN, f"under-claim not confirmed by execution: {what}; {c.message}"
    msg = f"Triton mutation analysis under-claims: {what}; {c.message}"
    j.verdict, j.check, j.explanation = Verdict.MISCOMPILE, "kernel-analysis", msg
    return Verdict.MISCOMPILE, msg


def _judge_stale(ctx: _Ctx, reports: list[LaunchReport]) -> tuple[Verdict, str]:
    """A miscompile the differential check found, explained by a needless claim on an
    argument that shares its storage with a written one: functionalization replaces the
    tensor by each claimed output in turn (``triton_kernel_wrapper_mutation_functionalize``,
    its "if two kernel inputs are views of each other" TODO), so the unwritten clone, when
    it comes last, overwrites the kernel's write."""
    j = ctx.j
    if j.verdict is not Verdict.MISCOMPILE:
        return Verdict.OK, ""
    stale = [
        (r, a, b)
        for r in reports
        for a in r.args
        if a.status in (OVER_CLAIM, FALLBACK)
        for b in r.args
        if b is not a and b.written_bytes and b.storage == a.storage
    ]
    if not stale:
        return Verdict.OK, ""
    r, a, b = stale[0]
    kind = "the fallback" if a.status == FALLBACK else "an over-claim"
    msg = (
        f"{_where(r, a)} is claimed written by {kind} but shares its storage with the "
        f"written {b.param}={b.value}: functionalization may write back its stale clone"
    )
    j.explanation += f" (kernel-analysis: {msg})"
    return Verdict.MISCOMPILE, msg


def _judge_fallbacks(ctx: _Ctx, reports: list[LaunchReport]) -> tuple[Verdict, str]:
    j = ctx.j
    decisions = {
        (d.statement, d.arg): d
        for d in getattr(j.execution, "decisions", [])
        if d.kind == _TRITON_KIND and d.statement is not None
    }
    claimed = {(c.decision.node, c.decision.arg) for c in j.claims if c.claim is not None}
    outcome, n = (Verdict.OK, ""), 0
    for r in reports:
        for a in r.with_status(FALLBACK):
            d = decisions.get((r.statement, a.param))
            kept = j.pipeline in _REINPLACING and d is not None and d.reinplaced is False
            if not kept or (d.node, d.arg) in claimed:
                j.filtered.append(
                    f"kernel-analysis fallback: {_where(r, a)} claimed written ({r.reason}); "
                    f"not a finding: {_no_cost(j.pipeline, d)}"
                )
                continue
            if j.verdict in (Verdict.MISCOMPILE, Verdict.CRASH, Verdict.TIMEOUT):
                continue  # a wrong or crashing run confirms nothing
            what = (
                f"{_where(r, a)} cloned ({d.nbytes} B) because the analysis fell back "
                f"({r.reason}); the launch never writes it"
            )
            if not ctx.confirm or n >= _MAX_CONFIRMATIONS:
                outcome = min(
                    outcome,
                    (Verdict.UNKNOWN, f"{what}; not confirmed"),
                    key=lambda o: o[0].severity,
                )
                continue
            n += 1
            c = _confirm.confirm_missed(
                ctx.run,
                ctx.fn,
                ctx.names,
                _confirm.input_variants(ctx.make, 1),
                _selector(d.node, d.arg),
            )
            if c.confirmed:
                outcome = (Verdict.MISSED_REINPLACE, f"{what}; {c.message}")
                if Verdict.MISSED_REINPLACE.severity < j.verdict.severity:
                    j.verdict, j.check, j.explanation = outcome[0], "kernel-analysis", outcome[1]
            else:
                outcome = min(
                    outcome,
                    (Verdict.UNKNOWN, f"{what}; not confirmed: {c.message}"),
                    key=lambda o: o[0].severity,
                )
    return outcome


def _no_cost(pipeline: str, d: Any) -> str:
    if pipeline not in _REINPLACING:
        return f"{pipeline} clones every claimed argument by design"
    if d is None:
        return "no decision of the pass names it"
    if d.reinplaced:
        return "the pass wrote it in place (no clone left)"
    return "already a claim of the candidates check"


def _selector(node: str, arg: str) -> Callable[[int, Any], bool]:
    def want(graph: int, cand: Any) -> bool:
        return cand.kind == _TRITON_KIND and (cand.node, cand.arg) == (node, arg)

    return want
