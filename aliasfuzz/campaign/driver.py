"""The campaign driver: generate, run in isolated workers, judge, shrink, dedupe, record.

Program ``i`` of a campaign is ``generate_one(seed, i)`` (:mod:`aliasfuzz.fuzz.sample`),
so a campaign's programs are a pure function of its seed (and the versions), on any
number of workers and across ``--resume``. Each (program, pipeline) task runs in a
:class:`~aliasfuzz.campaign.worker.Worker`; a ``crash`` or ``timeout`` of a dead or silent
worker (:func:`needs_confirmation`) is re-run once in a fresh worker before it is believed
(:func:`confirmed`); each finding is shrunk
(:mod:`.shrink`, Hypothesis's shrinker) in a worker too, then deduplicated by
:func:`~aliasfuzz.campaign.corpus.signature` and written atomically to the corpus. The
journal (:mod:`.journal`) makes a killed campaign resumable; the history (:mod:`.history`)
keeps one row per campaign for trends.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aliasfuzz.campaign import sources
from aliasfuzz.campaign.corpus import clean_temp, known_signatures, record, signature, versions
from aliasfuzz.campaign.follow import follow_key
from aliasfuzz.campaign.gpus import GpuSampler, merge_rows
from aliasfuzz.campaign.history import History
from aliasfuzz.campaign.journal import (
    Journal,
    dismissed_cause,
    dismissed_kind,
    entry_fields,
    finding_entries,
)
from aliasfuzz.campaign.known import load_known
from aliasfuzz.campaign.options import CampaignOptions, task_options
from aliasfuzz.campaign.pool import Pool
from aliasfuzz.campaign.progress import Progress
from aliasfuzz.campaign.shrink import same_failure
from aliasfuzz.campaign.worker import OUTSIDE_SIGNALS
from aliasfuzz.errors import InvalidArgument, clip
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.oracle.heap import may_be_corruption
from aliasfuzz.oracle.verdict import Verdict

__all__ = [
    "CampaignResult", "Dismissal", "program_at", "run_campaign", "time_bounds", "unconfirmed_death",
]


#: Seconds between two writes of a running campaign's ``elapsed`` file: what a ``kill -9``
#: can leave uncounted of the budget (the journal's last event may be much older).
ELAPSED_EVERY = 5.0


def tail_seconds(budget: float) -> float:
    """Seconds after a ``--time`` budget's end that findings still in flight are shrunk and
    blamed: a tenth of the budget, at least 30 s. Past them a finding is written as it is,
    unshrunk or partly shrunk and unblamed (:meth:`~aliasfuzz.campaign.pool.Pool.late`);
    fresh user 20's 200 s campaign ran 270 s, most of it the last findings' shrinks."""
    return max(30.0, 0.1 * budget)


def time_bounds(t0: float, budget: float, elapsed_before: float) -> tuple[float, float]:
    """``(deadline, tail_until)`` on the clock of ``t0`` (``time.monotonic()`` when this run
    of a ``--time budget`` campaign started) for a campaign that had already spent
    ``elapsed_before`` seconds (a resumed one): no program starts after ``deadline``,
    findings are shrunk and blamed until ``tail_until``. Both count the seconds already
    spent, so ``elapsed_before + (tail_until - t0)`` is at most ``budget +``
    :func:`tail_seconds` (more only when the campaign had spent that before). Fresh user
    21: killed 11 s into the tail of a 150 s budget and resumed, the campaign got another
    whole tail (30 s) and ended at 192 s, the bound being 180 s."""
    deadline = t0 + max(0.0, budget - elapsed_before)
    return deadline, t0 + max(0.0, budget + tail_seconds(budget) - elapsed_before)


def program_at(seed: int, i: int, max_statements: int = 8) -> Program:
    """Program ``i`` of a campaign with ``seed`` that mutates nothing (what the driver runs
    with ``--mutate 0``)."""
    return sources.Programs(seed, max_statements)[i]


def is_finding(verdict: str) -> bool:
    try:
        return Verdict(verdict).is_finding
    except ValueError:
        return False


#: Verdicts a worker's death or silence can produce.
_CONFIRM = ("crash", "timeout")

#: The journal's verdict of a task that hit an internal error of aliasfuzz (never a finding).
INTERNAL = "internal-error"


def internal_error_row(event: dict[str, Any]) -> dict[str, Any]:
    """``{i, pipeline, check, summary, stack}`` of an internal error, from a journal event:
    a task whose outcome is :data:`INTERNAL` (or, live, any outcome with ``internal_error``:
    a harness exception in the worker, or the worker's death outside the system under
    test), or an ``internal`` event (a shrink step's). ``summary`` is one line: the
    worker's own for a death, else the traceback's last line."""
    if event.get("t") == "internal":
        return {k: event.get(k) for k in ("i", "pipeline", "check", "summary", "stack")}
    out = event["outcome"]
    stack = str(out.get("internal_error") or "")
    last = (stack.strip().splitlines() or [""])[-1]
    summary = out.get("summary") or (out.get("explanation") if out.get("verdict") else None)
    return {
        "i": event.get("i"),
        "pipeline": event.get("pipeline"),
        "check": out.get("check"),
        "summary": summary or last,
        "stack": stack,
    }


def needs_confirmation(out: dict[str, Any]) -> bool:
    """Whether an outcome was synthesized from a worker's death or silence (a timeout, a
    crash by signal or exit status, a poisoned CUDA context, which an earlier task's
    asynchronous error can cause), so that it is re-run before it is believed. A ``crash``
    the live worker reported itself (an exception check) is deterministic and is not:
    re-running each in a fresh worker cost a torch import per crash (about 300 on a
    10-minute H200 campaign). A worker killed from outside while aliasfuzz's own code ran
    (an internal error, :data:`~aliasfuzz.campaign.worker.OUTSIDE_SIGNALS`) is re-run too:
    the program was never judged (the fourteenth session's fresh user: it stayed so)."""
    if "internal_error" in out:
        return out.get("check") in OUTSIDE_SIGNALS
    if out.get("verdict") == "timeout":
        return True
    check = str(out.get("check") or "")
    return out.get("verdict") == "crash" and check.startswith(("signal:", "exit:", "cuda-error"))


def confirmed(first: dict[str, Any], rerun: dict[str, Any]) -> dict[str, Any]:
    """The outcome of a task whose first run gave ``first`` (a crash or timeout that
    :func:`needs_confirmation`) and whose
    re-run in a fresh worker gave ``rerun``.

    The re-run decides: a worker killed from outside (an OOM killer's or a user's
    ``SIGKILL``), or one that died of an earlier task's leftovers, does not crash again on
    the same program, so the task is what the re-run says (often ``ok``), not a finding.
    When the two runs disagree, the first run is kept under ``first`` as a note; the
    campaign counts such tasks as flaky (:func:`is_flaky`).
    """
    out = dict(rerun)
    if not same_failure(first, rerun):
        out["first"] = {k: first.get(k) for k in ("verdict", "check", "explanation")}
    return out


def is_flaky(outcome: dict[str, Any]) -> bool:
    """Whether a task's first run crashed or timed out and its re-run did neither."""
    return "first" in outcome and outcome.get("verdict") not in _CONFIRM


def unconfirmed_death(out: dict[str, Any], blame: dict[str, Any]) -> str | None:
    """Why a finding is not written (None: it is): a worker's death by a signal that no cut
    of the pipeline reproduces (:func:`aliasfuzz.oracle.blame.blame` found no departing
    stage). A segfault whose program runs stage by stage is the process's, not the
    program's: memory an earlier run corrupted, seen dying in aliasfuzz's own adapter code
    (the third audit's crash-unblamed-inductor-21715a41da, whose repro exits 0)."""
    if out.get("verdict") not in ("crash", "timeout"):
        return None
    if not str(out.get("check") or "").startswith("signal:"):
        return None
    from aliasfuzz.oracle.blame import NOT_REPRODUCED

    if blame.get("stage") or blame.get("reason") != NOT_REPRODUCED:
        return None
    return f"{out['check']} not reproduced by any stage cut: {blame.get('reason')}"


#: Blamed stages whose cut runs code plain ``torch.compile(backend="aot_eager")`` runs:
#: a fast-path finding blamed there is confirmed without full Inductor.
_PUBLIC_PREFIX = ("dynamo", "functionalization", "aot-runtime")

#: The reinplace pass: a decision of it that the ground truth proves unsafe is a finding
#: even when full Inductor's code hides it (the first audit's contiguous rewrites).
_DECIDED = ("reinplace", "post-grad:reinplace_inplaceable_ops")


def _stage_raised(blame: dict[str, Any], stage: str) -> bool:
    """Whether ``stage``'s entry in the blame's trail departs by raising."""
    return any(s == stage and str(what).startswith("departs (raises")
               for s, what in blame.get("trail") or [])


def _reorder_exposed(blame: dict[str, Any]) -> bool:
    """Whether the blame stood only because disabling a reorder pass fixed the finding
    (:data:`aliasfuzz.oracle.blame.REORDER_ONLY`): the reordered post-grad graph, run with
    eager kernels, departs where full Inductor agrees (the ninth campaign's 4531172028,
    harness only, blamed on the reinplace pass since reorder passes no longer take it)."""
    from aliasfuzz.oracle.blame import REORDER_ONLY

    return any(REORDER_ONLY in str(what) for _, what in blame.get("trail") or [])


def fast_path_only(out: dict[str, Any], pipeline: str, blame: dict[str, Any]) -> str | None:
    """Why a fast-path finding is not written (None: it is), on ``inductor-reinplace``:

    * a ``crash``/``timeout`` that full ``torch.compile(backend="inductor")`` does not show
      (``blame["full"] == "hidden"``: the full compile ran the program to another verdict).
      The fast path runs Inductor's post-grad graph with eager ATen kernels, which no
      PyTorch contract promises to work (fifth audit, crash-reinplace-80d497b85e: the graph
      indexes the result of ``aten._foreach_copy_``, None in eager, not in Inductor's
      lowering). So is any other finding full Inductor hides, unless it is blamed on the
      reinplace pass (its unsafe decision is real: the first audit's contiguous rewrites
      show it under ``torch.compile``) or on a stage plain ``aot_eager`` runs (dynamo,
      decomposition or ATen tracing, functionalization): the ninth campaign's 4531172028, a miscompile
      of the post-grad graph run eagerly, blamed on ``reorder_for_locality``, that no
      public API shows (its second auditor: false positive, harness only); blamed on the
      reinplace pass only because a reorder pass's control agreed, it is harness only too;
    * any finding full Inductor cannot run here (``"unsupported"``: user Triton kernels on
      a CPU host), so that no public API confirmed it: of the five such findings of the
      eighth audit's campaign, run on the H200 (``bench/runs/gpu-repros-2026-12-01.md``),
      plain ``torch.compile`` showed three and not two (3ec1525bd5, f88cbff55f); and the
      crash 1874945920 was 80d497b85e's harness-only class. A GPU campaign judges them.
      Kept: one blamed on ``dynamo`` or ``functionalization``, stages whose cut is
      ``torch.compile(backend="aot_eager")``'s own code (cbd3794b15, #196657), except a
      crash or timeout whose blamed stage departs in values and does not raise: the crash
      itself is then the post-grad graph run with eager kernels, and the value departure is
      ``aot_eager``'s own finding (eleventh audit 0282f30f49: #196657's lost write, then
      an overlap refusal of the reinplaced graph run eagerly).
    """
    found = _fast_path_case(out, pipeline, blame)
    return None if found is None else found[1]


def _fast_path_case(out: dict[str, Any], pipeline: str,
                    blame: dict[str, Any]) -> tuple[str, str] | None:
    """:func:`fast_path_only`'s ``(cause, why)``: cause ``fast-path-unsupported`` (full
    Inductor cannot run it here) or ``fast-path-hidden`` (it does not show it), said by the
    branch that decides it, so that no reader parses ``why`` for it."""
    if pipeline != "inductor-reinplace":
        return None
    full = blame.get("full_outcome") or {}
    stage = str(blame.get("stage") or "")
    if blame.get("full") == "unsupported" and (
        stage not in _PUBLIC_PREFIX or (out.get("verdict") in ("crash", "timeout")
                                        and not _stage_raised(blame, stage))
    ):
        return "fast-path-unsupported", (
            f"fast-path-only {out['verdict']}, unconfirmed: full torch.compile(backend="
            f"'inductor') cannot run this program here ({clip(str(full.get('explanation')), 160)})"
            + (f"; {stage} departs in values, not by raising" if stage in _PUBLIC_PREFIX
               else ""))
    if blame.get("full") != "hidden":
        return None
    if out.get("verdict") not in ("crash", "timeout") and not _reorder_exposed(blame) and (
        stage in _DECIDED or stage.startswith(_PUBLIC_PREFIX + ("decomposition", "aten-trace"))
    ):
        return None
    return "fast-path-hidden", (
        f"fast-path-only {out['verdict']}: full torch.compile(backend='inductor') gives "
        f"{full.get('verdict', '?')}; the post-grad graph run with eager kernels is not a "
        "PyTorch contract" + (f" (blamed on {stage})" if stage else ""))


#: the causes of a ``flaky`` :class:`Dismissal`, each with the words the console's note
#: says it in, in the note's order among equal counts (one note for all, "the replay did
#: not show it again, or ..., or ...", said neither which nor how many: fresh user 32); a
#: cause not here (``other``: an older journal's reason that names none) is "another cause"
FLAKY_CAUSES = {
    "replay": "the replay did not show it again",
    "fresh": "neither a stage cut nor its pipeline in a fresh interpreter showed it",
    "death": "no stage cut reproduced the worker's death",
}

#: the causes of a ``harness-only`` :class:`Dismissal` (:func:`fast_path_only`), each with
#: its case in :attr:`CampaignResult.fast_path`
FAST_PATH_CAUSES = {"fast-path-hidden": "hidden", "fast-path-unsupported": "unsupported"}


@dataclass(frozen=True)
class Dismissal:
    """Why :func:`dismissal` does not write a finding: ``kind`` ``flaky`` or
    ``harness-only``; ``cause``, one of :data:`FLAKY_CAUSES` or :data:`FAST_PATH_CAUSES`
    (``other`` only for an older journal's event, :func:`~aliasfuzz.campaign.journal.dismissed_cause`);
    ``why``, the reason in words for a person; ``verdict``, the finding's. The counts read
    ``cause`` and ``verdict``, never ``why``, which they once parsed: a reworded reason
    would have moved a finding to another count, or to none, unseen."""

    kind: str
    cause: str
    why: str
    verdict: str | None = None

    def journal_fields(self) -> dict[str, Any]:
        """The keys of a ``finding`` event that journal this dismissal (:mod:`.journal`)."""
        return {"dismissed": self.why, "dismissed_kind": self.kind,
                "dismissed_cause": self.cause, "dismissed_verdict": self.verdict}


def dismissal(out: dict[str, Any], pipeline: str, blame: dict[str, Any]) -> Dismissal | None:
    """The :class:`Dismissal` of a shrunk, blamed finding that is not written (None: it
    is): kind ``flaky`` for :func:`unconfirmed_death` (cause ``death``), for a finding
    whose replay (the first execution of shrinking, :func:`aliasfuzz.campaign.shrink.shrink`)
    did not give the same failure (``replay``), and for one that no stage cut reproduced
    and whose pipeline in a fresh process (the blame's ``fresh``,
    :func:`aliasfuzz.campaign.pool.blame_in`) did not either (``fresh``); ``harness-only``
    for :func:`fast_path_only`. The one rule of the campaign and of
    :mod:`aliasfuzz.campaign.rebuild`.

    A finding is a claim confirmed by execution: one that a second run of the same program
    does not show is not written. A replay that died by a signal is the exception: the
    program under ``torch.compile`` broke the process both times (the eighth audit labeled
    4ceba35550 genuine: a value difference seen once, then a heap corruption in its replay
    and repro, Inductor writing a custom op's view of an input out of bounds)."""
    from aliasfuzz.campaign.shrink import unconfirmed_replay

    verdict = out.get("verdict")
    gave = unconfirmed_replay(out)
    if gave:
        said = clip(str(gave.get("explanation") or ""), 120)
        return Dismissal("flaky", "replay", (
            f"{verdict}/{out.get('check')} not reproduced when replayed: "
            f"the replay gave {gave.get('verdict')}/{gave.get('check')}"
            + (f" ({said})" if said else "")), verdict)
    why = unconfirmed_death(out, blame)
    if why is not None:
        return Dismissal("flaky", "death", why, verdict)
    fresh = blame.get("fresh")
    if fresh is not None and not same_failure(out, fresh):
        return Dismissal("flaky", "fresh", (
            f"{verdict}/{out.get('check')} not reproduced by any stage "
            f"cut, nor by {pipeline} in a fresh process, which gave "
            f"{fresh.get('verdict')}/{fresh.get('check')}"), verdict)
    found = _fast_path_case(out, pipeline, blame)
    return None if found is None else Dismissal("harness-only", *found, verdict)


def confirmed_roots(out: dict[str, Any], pipeline: str, blame: dict[str, Any]) -> dict[str, Any]:
    """``blame`` without the later blamed stages that :func:`fast_path_only` would not write
    on their own (the first stage passed :func:`dismissal`), each dropped one said in the
    trail (``unconfirmed``). A fast-path finding that full Inductor cannot run here, blamed
    on ``functionalization`` (kept: ``aot_eager``'s own code) and then on ``reinplace``,
    filed the reinplace root as a new miscompile that no public API had shown, its repro
    exiting 3 on the host that found it (fresh user 33's B1, ``c8852360b4``; a GPU
    campaign, where full Inductor runs it, writes that root)."""
    stages = [str(s) for s in blame.get("stages") or []]
    keep = stages[:1] + [s for s in stages[1:] if fast_path_only(
        out, pipeline, {**blame, "stage": s, "stages": [s]}) is None]
    if keep == stages:
        return blame
    dropped = ", ".join(s for s in stages if s not in keep)
    said = ("full torch.compile(backend='inductor') cannot run this program here"
            if blame.get("full") == "unsupported" else "full torch.compile(backend='inductor') "
            "does not show it") + ", and the fast path alone is not a PyTorch contract"
    return {**blame, "stages": keep,
            "trail": [*(blame.get("trail") or []), ("unconfirmed", f"{dropped}: not written: {said}")]}


def count_known_first(res: CampaignResult, e: dict[str, Any]) -> None:
    """Count in ``res`` a finding event recorded as found, not shrunk (``known_first``: the
    issue of the known bug it was recorded as, :meth:`aliasfuzz.campaign.pool.Pool._known_first`)."""
    if e.get("known_first"):
        res.known_first_by[str(e["known_first"])] += 1


def _shared_group(pipelines: list[str]) -> list[str]:
    """The pipelines of a program that run in one worker task from one Dynamo capture
    (:data:`aliasfuzz.passes.shared.SHAREABLE`), or none when fewer than two."""
    from aliasfuzz.passes.shared import SHAREABLE

    group = [p for p in pipelines if p in SHAREABLE]
    return group if len(group) >= 2 else []


@dataclass
class CampaignResult:
    """What a campaign did: counts per ``(pipeline, verdict)``, findings, where it wrote."""

    id: str
    dir: Path
    options: CampaignOptions
    programs: int = 0
    #: of ``programs``, those made by mutating a corpus program or seed (``--mutate``)
    mutants: int = 0
    #: programs judged by some pipelines but not all (the budget ran out, or the campaign
    #: was interrupted, while they ran): their runs are in ``verdicts``, not in ``programs``
    partial: int = 0
    tasks: int = 0
    seconds: float = 0.0
    verdicts: Counter = field(default_factory=Counter)
    #: one per finding event that named an entry no earlier one did: its ``ids`` (those
    #: entries), ``news`` and ``knowns`` (each entry's own status, aligned with ``ids``;
    #: :func:`~aliasfuzz.campaign.journal.finding_entries`), ``new`` (any of them new)
    findings: list[dict[str, Any]] = field(default_factory=list)
    internal_errors: int = 0
    internal: list[dict[str, Any]] = field(default_factory=list)
    flaky: int = 0
    #: findings not written because their replay did not show them again or no cut of the
    #: pipeline reproduced a signal death (:func:`dismissal`'s ``flaky`` kind; a crash that
    #: recurred in a fresh worker may be one: it is not among ``flaky``)
    unreproduced: int = 0
    #: ``unreproduced`` by cause (:class:`Dismissal`'s, a key of :data:`FLAKY_CAUSES`, or
    #: ``other``), for the console's note
    unreproduced_by: Counter = field(default_factory=Counter)
    #: fast-path findings full torch.compile does not show or cannot run here (:func:`fast_path_only`)
    harness_only: int = 0
    #: findings not shrunk because an earlier finding of the campaign had their coarse key
    #: (pipeline, verdict, check, decision kinds, op kinds, ops: ``_Campaign._prekey``), taken
    #: before shrinking: a different root cause with the same key is not filed (fresh user 30)
    duplicates: int = 0
    #: findings recorded as found, not shrunk, as a sighting of a known bug already in the
    #: corpus whose workaround removes them (:meth:`.pool.Pool._known_first`), by the issue
    #: each was recorded as
    known_first_by: Counter = field(default_factory=Counter)
    #: ``harness_only`` by ``(case, verdict)``: case ``hidden`` (full torch.compile does not
    #: show it) or ``unsupported`` (full torch.compile cannot run here: unconfirmed)
    fast_path: Counter = field(default_factory=Counter)
    status: str = "running"
    report: Path | None = None
    #: wall seconds per stage (:mod:`aliasfuzz.campaign.costs`), summed over every worker
    stages: Counter = field(default_factory=Counter)
    #: a CUDA campaign's GPUs, one row each (:meth:`aliasfuzz.campaign.gpus.GpuSampler.stop`,
    #: every run of a resumed campaign merged); empty on CPU
    gpus: list[dict[str, Any]] = field(default_factory=list)

    @property
    def known_first(self) -> int:
        """The findings recorded as found, not shrunk (:attr:`known_first_by`'s total)."""
        return sum(self.known_first_by.values())

    @property
    def failing(self) -> list[dict[str, Any]]:
        """Findings whose verdict is in ``fail_on`` that filed an entry both new to the
        corpus and not a known upstream bug (``corpus/known.toml``): these make ``run``
        exit 1. Entry by entry: a finding's known first root does not excuse a new second
        one, nor does its new first root make a known second one fail."""
        return [
            f for f in self.findings
            if f["verdict"] in self.options.fail_on
            and any(e.new and not e.known for e in finding_entries(f))
        ]


def _new_campaign(opts: CampaignOptions) -> tuple[str, Path, dict[str, Any]]:
    cid = time.strftime("%Y%m%d-%H%M%S") + f"-s{opts.seed}"
    d = Path(opts.state) / "runs" / cid
    n = 1
    while d.exists():
        n += 1
        d = Path(opts.state) / "runs" / f"{cid}-{n}"
    d.mkdir(parents=True)
    start = {
        "id": d.name,
        "started": time.time(),
        "versions": versions(),
        "known": sorted(known_signatures(opts.corpus)),
    }
    (d / "options.json").write_text(json.dumps(opts.to_json(), indent=1))
    (d / "start.json").write_text(json.dumps(start, indent=1))
    if opts.mutate > 0:  # the corpus as it is now: a resume draws the same programs
        sources.save(d, sources.collect(opts.corpus))
    return d.name, d, start


def _read_elapsed(d: Path) -> float:
    """The seconds a campaign's ``elapsed`` file holds (0 when absent or torn by a kill)."""
    try:
        return float((d / "elapsed").read_text())
    except (OSError, ValueError):
        return 0.0


def _newest_first(state: str | Path) -> list[Path]:
    """Campaign directories under ``state``, newest first (by modification time)."""
    return list(reversed(sorted((Path(state) / "runs").glob("*"), key=lambda p: p.stat().st_mtime)))


def _last_end(d: Path) -> dict[str, Any] | None:
    """The last ``end`` event of campaign directory ``d``'s journal, None when it has none."""
    ends = [e for e in Journal.events(d / "journal.jsonl") if e.get("t") == "end"]
    return ends[-1] if ends else None


def latest_unfinished(state: str | Path) -> Path | None:
    """The newest campaign directory under ``state`` whose journal has no ``end`` event.

    A campaign that died of an internal error ends with ``{"t": "end", "status":
    "failed"}`` (and ``failed`` in the history), so it is not picked: resuming it would
    most likely die the same way. ``aliasfuzz run --resume DIR`` still resumes it.
    """
    return next((d for d in _newest_first(state) if _last_end(d) is None), None)


def campaign_done(d: Path) -> bool:
    """Whether campaign directory ``d``'s journal ends with a ``done`` end event (a campaign
    that ran its whole budget: ``--resume`` refuses it)."""
    return (_last_end(d) or {}).get("status") == "done"


def latest_failed(state: str | Path) -> Path | None:
    """The newest campaign directory under ``state`` that ended ``failed`` (an internal
    error), which ``--resume`` skips and ``--resume DIR`` still resumes; None if none."""
    return next((d for d in _newest_first(state)
                 if (_last_end(d) or {}).get("status") == "failed"), None)


def load_campaign(d: Path) -> tuple[CampaignOptions, dict[str, Any], list[dict[str, Any]]]:
    """Options, start record and journal events of campaign directory ``d``."""
    name = "options.json"
    try:
        opts = CampaignOptions.from_json(json.loads((d / name).read_text()))
        name = "start.json"
        start = json.loads((d / name).read_text())
    except (OSError, ValueError) as e:  # ValueError: bad JSON or bad UTF-8
        # the file named (fresh user 47's B15: "(Expecting value ...)" named none)
        raise InvalidArgument(f"{d}: not a resumable campaign directory ({name}: {e})") from None
    return opts, start, Journal.events(d / "journal.jsonl")


def _lock(run_dir: Path, cid: str):
    """An exclusive lock on a campaign's folder for this driver's lifetime (released when
    the process ends, also by ``kill -9``); raises :class:`InvalidArgument` when another
    driver holds it: two drivers on one campaign would journal every task twice."""
    import fcntl

    if not run_dir.is_dir():
        raise InvalidArgument(f"{run_dir}: not a resumable campaign directory")
    f = open(run_dir / "lock", "a")  # noqa: SIM115 - held until the process ends
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise InvalidArgument(
            f"campaign {cid} is being run by another aliasfuzz process ({run_dir})"
        ) from None
    return f


class _Campaign:
    def __init__(self, opts: CampaignOptions, resume: Path | None, show: bool):
        self.opts = opts
        self.resumed = resume is not None
        if resume is None:
            cid, self.dir, self.start = _new_campaign(opts)
            self._lock = _lock(self.dir, cid)
            events: list[dict[str, Any]] = []
        else:
            self.dir = resume
            self._lock = _lock(resume, resume.name)
            try:
                saved, self.start, events = load_campaign(resume)
            except InvalidArgument:
                self._lock.close()
                raise
            cid = self.start["id"]
            if show:  # once it holds the lock: a refused second driver says only why
                print(f"aliasfuzz: resuming campaign {resume.name} ({resume})",
                      file=sys.stderr, flush=True)
            if saved.to_json() != opts.to_json():  # e.g. a new budget: the next resume keeps it
                tmp = resume / "options.json.tmp"
                tmp.write_text(json.dumps(opts.to_json(), indent=1))
                os.replace(tmp, resume / "options.json")
        self.res = CampaignResult(cid, self.dir, opts)
        self.known = set(self.start["known"])
        self.done: set[tuple[int, str]] = set()
        self.mutant_ids: set[int] = set()  # programs that are mutants (sources.Programs)
        self.pending: dict[tuple[int, str], dict[str, Any]] = {}
        self.prekeys: set[tuple] = set()
        #: prekey -> [program, pipeline] of the campaign's first finding with it
        self.prekey_first: dict[tuple, list[Any]] = {}
        #: shrink once per program failure (:mod:`.follow`): key -> the leader's pipeline,
        #: its shrunk program and blamed stages once known, and the followers waiting
        self.leads: dict[tuple, dict[str, Any]] = {}
        self.leading: dict[tuple[int, str], tuple] = {}  # (i, leader pipeline) -> key
        self.elapsed_before = 0.0
        self.gen_seconds: dict[int, float] = {}  # generation time, journaled with a task
        self.gpu_runs: list[list[dict[str, Any]]] = []  # "gpus" events of earlier runs
        self._replay(events)
        self._count_programs()
        self.elapsed_before = max(self.elapsed_before, _read_elapsed(self.dir))
        self._elapsed_at = 0.0
        self.journal = Journal(self.dir / "journal.jsonl")
        self.history = History(Path(opts.state) / "history.sqlite")
        self.programs = sources.Programs(opts.seed, opts.max_statements, opts.mutate,
                                         sources.load(self.dir), opts.grad_share,
                                         opts.dynamic_share)
        self.bugs = load_known(opts.corpus)
        self.show = show

    def _replay(self, events: list[dict[str, Any]]) -> None:
        # each event is measured from the start of the session that wrote it: a ``resume``
        # event marks a session's start and the seconds spent before it (fresh user 43's
        # B1: measured from the campaign's first start, the idle time between an interrupt
        # and the next resume counted against --time from the second resume on)
        since, spent = float(self.start["started"]), 0.0
        for e in events:
            key = (e.get("i"), e.get("pipeline"))
            self.res.stages.update(e.get("costs") or {})
            if e["t"] == "task":
                self.done.add(key)
                if e.get("mutated_from"):
                    self.mutant_ids.add(e["i"])
                self._count(e["pipeline"], e["outcome"])
                self.res.flaky += is_flaky(e["outcome"])
                if is_finding(e["outcome"]["verdict"]):
                    self.pending[key] = e
                if e["outcome"]["verdict"] == INTERNAL:
                    self._note_internal(internal_error_row(e))
            elif e["t"] == "internal":
                self._note_internal(internal_error_row(e))
            elif e["t"] == "gpus":
                self.gpu_runs.append(e["gpus"])
            elif e["t"] == "finding":
                self.pending.pop(key, None)
                kind = dismissed_kind(e)
                if kind:  # a resumed campaign counts it as the first run did
                    cause, verdict = dismissed_cause(e)
                    self._count_dismissed(Dismissal(kind, cause, str(e["dismissed"]), verdict))
                if e.get("prekey"):
                    key = tuple(json.dumps(x) for x in e["prekey"])
                    self.prekeys.add(key)
                    self.prekey_first.setdefault(key, [e["i"], e["pipeline"]])
                if e.get("duplicate"):
                    self.res.duplicates += 1
                if e.get("id"):
                    self._add_finding(e)
                    count_known_first(self.res, e)
            if e["t"] == "resume":
                since, spent = float(e["ts"]), float(e.get("elapsed") or 0.0)
            if "ts" in e:
                self.elapsed_before = max(self.elapsed_before, spent + e["ts"] - since)
            if e["t"] == "interrupted":
                self.elapsed_before = max(self.elapsed_before, float(e.get("elapsed") or 0.0))

    def _count_dismissed(self, d: Dismissal) -> None:
        """Count a finding :func:`dismissal` kept out of the corpus, by its ``cause``: a
        ``flaky`` one in :attr:`CampaignResult.unreproduced` (and ``unreproduced_by``), a
        fast-path one in ``harness_only`` and in ``fast_path`` by case and verdict, so the
        summary tells the cases apart (fresh user 23). Also for the journal's events on
        ``--resume``: a dismissal journaled before a ``kill -9`` was counted by no one (a
        fresh user's SIGSEGV, gone from the summary)."""
        if d.kind == "flaky":
            self.res.unreproduced += 1
            self.res.unreproduced_by[d.cause] += 1
        elif d.cause in FAST_PATH_CAUSES:  # an older journal's other reason: counted nowhere
            self.res.harness_only += 1
            self.res.fast_path[FAST_PATH_CAUSES[d.cause], d.verdict] += 1

    def _count_programs(self) -> None:
        """``programs`` and ``mutants``: the programs every pipeline has judged, and of
        them those that are mutants (their task events name ``mutated_from``)."""
        started = {k[0] for k in self.done}
        full = {i for i in started if self._fully_done(i)}
        self.res.programs, self.res.mutants = len(full), len(full & self.mutant_ids)
        self.res.partial = len(started - full)

    def _count(self, pipeline: str, out: dict[str, Any]) -> None:
        self.res.tasks += 1
        self.res.verdicts[(pipeline, out["verdict"])] += 1

    def _add_finding(self, e: dict[str, Any]) -> None:
        """Keep finding event ``e`` for the summary, once per corpus entry: the entries it
        filed that no kept finding names yet (fresh user 26: a program blamed on two
        stages filed cbd3794b15, already shown for another program, and c8852360b4, which
        neither a line nor the root-cause count named)."""
        shown = {i for f in self.res.findings for i in (f.get("ids") or [f["id"]])}
        # each entry's own status (an event journaled before news and knowns, too)
        every = finding_entries(e, self.known)
        entries = [x for x in every if x.id not in shown]
        if not entries:
            return
        kept = {k: e.get(k) for k in ("pipeline", "verdict", "check", "i", "stage", "stages",
                                      "full", "budget_spent")}
        kept.update(entry_fields(entries))
        stages = list(e.get("stages") or [])
        if len(stages) == len(every) > 1:  # one root per blamed stage, in blame order
            # each line names its own entry's stage, and the event's first entry when an
            # earlier line showed it (fresh user 33's B5: "stage=functionalization,reinplace"
            # on reinplace's entry, "same program as" missing)
            kept["entry_stages"] = [st for x, st in zip(every, stages, strict=True) if x.id not in shown]
            kept["same_as"] = every[0].id if entries[0].id != every[0].id else None
        self.res.findings.append(kept)

    def _log(self, event: dict[str, Any]) -> None:
        event["ts"] = time.time()
        self.journal.append(event)

    def _tick(self, t0: float, force: bool = False) -> None:
        """Write the campaign's seconds so far to its ``elapsed`` file every
        :data:`ELAPSED_EVERY` seconds (``force``: now): a resume after ``kill -9`` counts
        them towards ``--time`` (the journal's last event may be minutes before the kill)."""
        now = time.monotonic()
        if now - self._elapsed_at < ELAPSED_EVERY and not force:
            return
        self._elapsed_at = now
        # written in place, not renamed: the folder's mtime orders campaigns (_newest_first)
        with open(self.dir / "elapsed", "w") as f:
            f.write(f"{self.elapsed_before + now - t0:.1f}\n")

    # -- the main loop -------------------------------------------------------------------
    def _fully_done(self, i: int) -> bool:
        return all((i, p) in self.done for p in self.opts.pipelines)

    def run(self) -> CampaignResult:
        opts, res = self.opts, self.res
        clean_temp(opts.corpus)
        self._record("running")
        t0 = time.monotonic()
        deadline = None
        if self.resumed:  # where this session's clock starts, for the next resume
            self._log({"t": "resume", "elapsed": self.elapsed_before})
        pool = Pool(opts, self.dir / "workers", self.bugs)
        if opts.time is not None:  # findings in flight after the tail are shrunk and blamed no longer
            deadline, pool.tail_until = time_bounds(t0, opts.time, self.elapsed_before)
        # utilization per GPU, sampled beside the campaign (never fails it: .gpus)
        sampler = GpuSampler(pool.gpus, pool.workers_per_gpu()).start() if pool.gpus else None
        in_flight, i, feeding = 0, 0, True
        progress = Progress(opts, show=self.show, done=len({k[0] for k in self.done}))
        try:
            for (j, p), e in sorted(self.pending.items()):  # findings the last run left
                in_flight += self._finding(
                    pool, j, p, Program.from_json(e["program"]), e["outcome"]
                )
            self.pending.clear()
            with progress:
                while True:
                    if deadline is not None and time.monotonic() >= deadline:
                        feeding = False
                    while feeding and in_flight < 2 * opts.workers:
                        if opts.programs is not None and i >= opts.programs:
                            feeding = False
                            break
                        if not self._fully_done(i):
                            g0 = time.perf_counter()
                            program = self.programs[i]
                            self.gen_seconds[i] = time.perf_counter() - g0
                            todo = [p for p in opts.pipelines if (i, p) not in self.done]
                            group = _shared_group(todo) if opts.share_trace else []
                            if group:  # one worker task, one Dynamo capture
                                pool.submit(1, ("group", i, tuple(group), program, None))
                                in_flight += len(group)  # one message per pipeline
                            for p in todo:
                                if p not in group:
                                    pool.submit(1, ("task", i, p, program, None))
                                    in_flight += 1
                        i += 1
                    if in_flight == 0 and not feeding:
                        break
                    self._tick(t0)
                    try:
                        msg = pool.results.get(timeout=0.25)
                    except queue.Empty:
                        progress.update(res)
                        continue
                    in_flight -= 1
                    in_flight += self._handle(pool, msg)
                    self._count_programs()
                    progress.update(res)
            res.status = "done"
        except KeyboardInterrupt:
            res.status = "interrupted"
        finally:
            if res.status == "done":  # every job answered: the workers are idle
                pool.close()
            else:  # interrupted (or failing): the jobs in flight are redone by --resume
                pool.abandon()
            res.seconds = self.elapsed_before + (time.monotonic() - t0)
            self._tick(t0, force=True)  # elapsed is not left seconds behind the journal
            if sampler is not None:
                rows = sampler.stop()
                self._log({"t": "gpus", "gpus": rows})
                res.gpus = merge_rows([*self.gpu_runs, rows])
            if res.status == "running":  # an internal error is on its way up: not resumable
                res.status = "failed"
            if res.status in ("done", "failed"):
                self._log({"t": "end", "status": res.status, "flaky": res.flaky,
                           "unreproduced": res.unreproduced})
            elif res.status == "interrupted":  # the time spent since the last event counts too
                self._log({"t": "interrupted", "elapsed": res.seconds})
            self.journal.close()
            self._record(res.status)
            if res.status == "done":  # nothing left to resume: no lock file to leave behind
                (self.dir / "lock").unlink(missing_ok=True)
            self._lock.close()
        return res

    def _handle(self, pool: Pool, msg: tuple) -> int:
        """Journal one message from the pool; return the number of jobs it submitted."""
        kind, i, pipeline, payload, out = msg
        if kind == "fatal":
            raise RuntimeError(f"campaign worker thread failed:\n{payload}")
        if kind == "internal":  # a shrink step's: journaled on its own (no task event)
            row = self._internal(i, pipeline, payload)
            self._log({"t": "internal", **row})
            return 1  # not the end of a job: the shrink job it came from is still running
        if kind == "task" and (needs_confirmation(out) or may_be_corruption(out)):
            pool.submit(0, ("confirm", i, pipeline, payload, out))
            return 1  # journaled once the re-run answers: a kill before that re-runs both
        if kind == "confirmed":
            payload, out = payload[0], confirmed(payload[1], out)
            kind = "task"
        if kind == "task":
            program = payload
            stages = out.pop("costs", None) or {}
            if "internal_error" in out:  # raised in the live worker, or a death in aliasfuzz
                row = self._internal(i, pipeline, out)
                out = {
                    "verdict": INTERNAL,
                    "check": row["check"],
                    "explanation": row["summary"],
                    "internal_error": row["stack"],
                }
            event = {
                "t": "task",
                "i": i,
                "pipeline": pipeline,
                "outcome": out,
                "h": hashlib.sha256(program.dumps().encode()).hexdigest()[:16],
                "op_kinds": sorted({lookup(op.op).kind.value for op in program.body}),
                "statements": len(program.body),
            }
            if program.meta.get("dynamic"):  # compiled with dynamic shapes (sources.mark_dynamic)
                event["dynamic"] = True
            if program.meta.get("mutated_from"):  # a mutant (sources.Programs): counted apart
                event["mutated_from"] = program.meta["mutated_from"]
                self.mutant_ids.add(i)
            if is_finding(out["verdict"]):
                event["program"] = program.to_json()
            event["costs"] = self._costs(stages, i)
            self._log(event)
            self.done.add((i, pipeline))
            self._count(pipeline, out)
            self.res.flaky += is_flaky(out)
            if is_finding(out["verdict"]):
                return self._finding(pool, i, pipeline, program, out)
            return 0
        original, small, spent, blame, spent_s, note = payload
        self._write(i, pipeline, original, small, out, spent, blame, self._costs(spent_s),
                    note)
        return self._lead_done(pool, i, pipeline, original, small, blame)

    def _costs(self, stages: dict[str, float], i: int | None = None) -> dict[str, float]:
        """``stages`` with program ``i``'s generation time (its first journaled task
        carries it), added to the campaign's totals; rounded for the journal."""
        stages = dict(stages)
        if i is not None and i in self.gen_seconds:
            stages["generate"] = stages.get("generate", 0.0) + self.gen_seconds.pop(i)
        stages = {k: round(v, 6) for k, v in stages.items()}
        self.res.stages.update(stages)
        return stages

    def _internal(self, i: int | None, pipeline: str, out: dict[str, Any]) -> dict[str, Any]:
        """Count and log an internal error (an outcome with ``internal_error``); its row."""
        row = internal_error_row({"i": i, "pipeline": pipeline, "outcome": out})
        self._note_internal(row)
        with open(self.dir / "internal-errors.log", "a") as f:
            f.write(f"program {i} on {pipeline}:\n{row['stack']}\n")
        return row

    def _note_internal(self, row: dict[str, Any]) -> None:
        self.res.internal_errors += 1
        self.res.internal.append({k: row[k] for k in ("i", "pipeline", "check", "summary")})

    def _prekey(self, program: Program, out: dict[str, Any], pipeline: str) -> tuple:
        """The coarse key under which the campaign shrinks one finding (:func:`signature`'s
        pipeline, verdict, check, decision kinds and op kinds) and the program's registry
        op names: with op kinds alone, fresh user 30's program 77 (a root of its own,
        decomposition's) went unshrunk behind an earlier remove_noop_ops finding; op names
        split 44 of campaign 30's 270 such findings off, for their shrinks' cost."""
        sig = signature(program, out, pipeline)
        return (*(json.dumps(sig[k])
                  for k in ("pipeline", "verdict", "check", "decision_kinds", "op_kinds")),
                json.dumps(sorted({op.op for op in program.body})))

    def _finding(
        self, pool: Pool, i: int, pipeline: str, program: Program, out: dict[str, Any]
    ) -> int:
        """Shrink a new kind of finding (returns 1 job) or journal a duplicate (0 jobs).

        With ``shrink_once`` a finding whose :func:`~.follow.follow_key` another pipeline's
        finding of the same program has already (the leader) follows it: it waits for the
        leader's shrunk program and tries that first (a ``follow`` job, :mod:`.follow`)."""
        key = self._prekey(program, out, pipeline)
        if key in self.prekeys:
            # journaled with the finding it was taken for, counted, and listed by the report
            self._log({"t": "finding", "i": i, "pipeline": pipeline, "id": None, "duplicate": True,
                       "like": self.prekey_first.get(key)})
            self.res.duplicates += 1
            return 0
        self.prekeys.add(key)
        self.prekey_first[key] = [i, pipeline]
        fkey = follow_key(i, out) if self.opts.shrink_once and self.opts.shrink else None
        lead = self.leads.get(fkey) if fkey is not None else None
        if lead is None:
            if fkey is not None:
                self.leads[fkey] = {"pipeline": pipeline, "small": None, "waiting": []}
                self.leading[(i, pipeline)] = fkey
            pool.submit(0, ("shrink", i, pipeline, program, out))  # then blamed in the worker
        elif lead["small"] is None:  # the leader is still shrinking: wait for it
            lead["waiting"].append((pipeline, program, out))
        elif lead["small"] is False:  # the leader's shrink got nowhere: shrink on its own
            pool.submit(0, ("shrink", i, pipeline, program, out))
        else:
            self._submit_follow(pool, i, pipeline, program, out, lead)
        return 1

    def _submit_follow(self, pool: Pool, i: int, pipeline: str, program: Program,
                       out: dict[str, Any], lead: dict[str, Any]) -> None:
        job = {"outcome": out, "small": lead["small"], "stages": lead["stages"],
               "pipeline": lead["pipeline"]}
        pool.submit(0, ("follow", i, pipeline, program, job))

    def _lead_done(self, pool: Pool, i: int, pipeline: str, original: Program,
                   small: Program, blame: dict[str, Any] | None) -> int:
        """A leader's shrink came back: its followers go (their jobs were counted when
        they arrived, so this submits no new ones: returns 0). A leader that came back
        unshrunk (it did not reproduce, or nothing could go) offers nothing to follow:
        its followers are shrunk on their own, as without ``shrink_once``."""
        fkey = self.leading.pop((i, pipeline), None)
        if fkey is None:
            return 0
        lead = self.leads[fkey]
        unshrunk = small.dumps() == original.dumps()
        lead["small"] = False if unshrunk else small
        lead["stages"] = list((blame or {}).get("stages") or [])
        for p, program, out in lead.pop("waiting"):
            if unshrunk:
                pool.submit(0, ("shrink", i, p, program, out))
            else:
                self._submit_follow(pool, i, p, program, out, lead)
        return 0

    def _write(
        self,
        i: int,
        pipeline: str,
        original: Program,
        small: Program,
        out: dict[str, Any],
        spent: int,
        blame: dict[str, Any] | None = None,
        stages: dict[str, float] | None = None,
        note: dict[str, Any] | None = None,
    ) -> None:
        """Write the finding under each of its root causes (:func:`roots`): a new entry, or
        one more sighting (``hits``) of an entry already in the corpus."""
        blame = blame or {"stage": None, "stages": [], "trail": [], "reason": "not cut"}
        dismissed = dismissal(out, pipeline, blame)
        if dismissed is not None:  # journaled and counted (flaky / harness only), never written
            self._log({"t": "finding", "i": i, "pipeline": pipeline, "id": None,
                       **dismissed.journal_fields(), "costs": stages or {}})
            self._count_dismissed(dismissed)
            return
        blame = confirmed_roots(out, pipeline, blame)
        found = record(
            Path(self.opts.corpus), original, small, out, pipeline, blame, self.bugs,
            {
                "campaign": self.res.id,
                "seed": self.opts.seed,
                "program_index": i,
                "device": self.opts.device,
                # the shrunk program's: shrinking may have dropped dynamic shapes (shrink._plan)
                "pipeline_options": task_options(self.opts.pipeline_options, pipeline, small),
                "shrink_executions": spent,
                **({"known_first": note["known_first"]} if (note or {}).get("known_first") else {}),
            },
        )
        ids = [path.name for path in found.paths]
        # per entry: one finding may file a new entry and one already in the corpus, a
        # known upstream bug and a root no issue names (journal.finding_entries)
        news = [eid not in self.known for eid in ids]
        event = {
            "t": "finding",
            "i": i,
            "pipeline": pipeline,
            "id": ids[0],
            "ids": ids,
            "news": news,
            "knowns": list(found.knowns),
            "new": any(news),
            "stage": blame.get("stage"),
            "stages": blame.get("stages") or [],
            "full": blame.get("full"),
            "verdict": out["verdict"],
            "check": out.get("check"),
            "prekey": [json.loads(x) for x in self._prekey(original, out, pipeline)],
            "costs": stages or {},
            "shrink_executions": spent,
            # follows / follow_refused: the leader's pipeline (.follow); known_first: the
            # issue of the known bug it was recorded as without shrinking (.pool)
            **(note or {}),
        }
        self._log(event)
        self._add_finding(event)
        count_known_first(self.res, event)

    def _record(self, status: str) -> None:
        res, opts = self.res, self.opts
        budget = f"{opts.programs} programs" if opts.programs else f"{opts.time:g} s"
        self.history.record(
            {
                "id": res.id,
                "started": self.start["started"],
                "finished": time.time(),
                "seed": opts.seed,
                "device": opts.device,
                "pipelines": ",".join(opts.pipelines),
                "budget": budget,
                "programs": res.programs,
                "tasks": res.tasks,
                "seconds": res.seconds,
                "throughput": res.programs / res.seconds if res.seconds else 0.0,
                "status": status,
                "versions": self.start["versions"],
                "internal_errors": res.internal_errors,
            },
            dict(res.verdicts),
            res.findings,
            dict(res.stages),
        )


def run_campaign(
    opts: CampaignOptions, *, resume: Path | None = None, show: bool = True
) -> CampaignResult:
    """Run (or resume) a campaign; see the module docstring. Ctrl-C stops it resumably.

    Raises :class:`~aliasfuzz.errors.InvalidArgument` when this process's aliasfuzz comes
    from more than one source tree (:func:`~aliasfuzz.campaign.corpus.mixed_sources`)."""
    from aliasfuzz.campaign.corpus import mixed_sources

    mixed = mixed_sources()
    if mixed is not None:
        raise InvalidArgument(mixed)
    return _Campaign(opts, resume, show).run()
