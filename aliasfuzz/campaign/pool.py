"""The driver's worker pool: one thread per :class:`~aliasfuzz.campaign.worker.Worker`.

Jobs go in through :meth:`Pool.submit` (a priority queue: shrink jobs, priority 0, run
before new programs, priority 1); results come out of :attr:`Pool.results` as tuples
``(kind, program index, pipeline, payload, outcome)`` with kind ``task`` (also one per
pipeline of a ``group`` job: a program's Dynamo-fronted pipelines in one worker task, from
one Dynamo capture; a group whose worker dies, hangs or fails runs its pipelines again one
by one, so that every outcome is its own pipeline's), ``confirmed``
(a crash or timeout re-run in a fresh child: payload ``(program, first outcome)``),
``shrunk`` (payload ``(program, minimized program, executions, blame, costs, note)``: the
finding minimized, then cut stage by stage in the same worker; ``costs`` the wall seconds
of ``shrink`` and ``blame``; the job was ``shrink``, or ``follow``: another pipeline's
shrunk program of the same program tried first, :mod:`aliasfuzz.campaign.follow`, which
``note`` tells), ``internal`` (an internal error
while shrinking or blaming, payload the worker's outcome: logged, journaled and counted by
the driver, the shrink step counts as not reproducing) or ``fatal`` (a harness bug in a pool thread,
re-raised by the driver).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.follow import accepts
from aliasfuzz.campaign.gpus import visible_gpus, worker_gpu
from aliasfuzz.campaign.options import CampaignOptions, task_options
from aliasfuzz.campaign.shrink import same_failure, shrink, unconfirmed_replay
from aliasfuzz.campaign.torn_kernels import remove_torn
from aliasfuzz.campaign.worker import OUTSIDE_SIGNALS, Worker
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.heap import CORRUPTION_CHECKS, DIED_OF, HEAP_MESSAGE, may_be_corruption
from aliasfuzz.oracle.heap import confirm as confirm_heap

__all__ = ["ABANDON_GRACE", "Pool", "blame_in", "kernel_cache_dir"]

#: Seconds an interrupted campaign's workers get to end the jobs in flight before their
#: children are killed (:meth:`Pool.abandon`): a supervisor's TERM-then-KILL (docker stop,
#: systemd) waits 10 s, and a quick task or an idle child still ends politely.
ABANDON_GRACE = 3.0

#: Candidates a heap-corruption finding's shrink runs at most (the campaign's
#: ``shrink_budget`` caps it too): each is confirmed as the finding was, in up to
#: ``oracle.heap.TRIES`` child interpreters and the eager control's, where a worker's run
#: takes a second. Campaign seed 12's program 20 (11 statements, written unshrunk before)
#: went to 9 in 12 candidates and 632 s of one worker on the 2-core box; by hand, 3 suffice.
#: A finding shown by its wrapper's out-of-bounds view (``heap`` ``"static"``) is not capped:
#: each of its candidates is one child interpreter's compile and run.
HEAP_SHRINK_BUDGET = 12


def kernel_cache_dir(opts: CampaignOptions) -> Path | None:
    """The ``TORCHINDUCTOR_CACHE_DIR`` every worker of a campaign shares, or None for one
    per worker (:class:`~aliasfuzz.campaign.worker.Worker`'s own).

    ``kernel_cache = "shared"``: ``<state>/kernel-cache``, shared by all workers of all
    campaigns with that state folder. What lives there is Inductor's C++/Python kernel
    cache, keyed by the generated source and compile flags (``torch/_inductor/codecache.py``
    ``CppCodeCache.load_async``, ``write``), and the probes of the CPU's vector ISA
    (``cpu_vec_isa.VecISA.check_build``), all made after every graph pass ran; the caches
    keyed by graphs, which would skip the passes under test, stay off
    (:func:`aliasfuzz.passes.hygiene.setup_process`). Concurrent writers are Inductor's own
    case (its compile subprocesses share one folder, under file locks).
    """
    if opts.kernel_cache != "shared":
        return None
    path = Path(opts.state).resolve() / "kernel-cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _uncut(outcome: dict[str, Any], blame: dict[str, Any]) -> bool:
    """Whether no cut of the pipeline reproduced finding ``outcome`` (a signal death
    excepted: :func:`~aliasfuzz.campaign.driver.unconfirmed_death` judges those)."""
    from aliasfuzz.oracle.blame import NOT_REPRODUCED

    return (not blame.get("stage") and blame.get("reason") == NOT_REPRODUCED
            and not str(outcome.get("check") or "").startswith("signal:"))


def blame_in(
    worker: Worker, task: dict[str, Any], outcome: dict[str, Any], bugs: Sequence[Any] = (),
    ran: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Blame finding ``outcome`` of ``task`` (program, pipeline, device, options) in
    ``worker``: the cut (:func:`aliasfuzz.campaign._judge.blame`) as one task, then, for
    the fast path, full ``inductor`` as a task of its own, so that a compile that kills
    the worker there (a heap corruption: fourth audit 8be8a9c905) is that check's
    ``crash`` and does not lose the blame. A cut that kills the worker is run once more
    with every stage and control in a child interpreter (``isolate``; twelfth audit
    0374cd4bda).
    A finding that no cut reproduces is judged once more in a fresh worker (the blame's
    ``fresh``: its verdict, check and explanation).
    A finding its replay did not show
    (:func:`~aliasfuzz.campaign.shrink.unconfirmed_replay`) is not cut. Then the controls
    of the known bugs (``bugs``, :class:`~aliasfuzz.campaign.known.KnownBug`) whose fields
    match the finding's roots, each as a task of its own (the program under the finding's
    pipeline with the control's options); their verdicts go into the blame's ``controls``
    (issue -> verdict) and whether each removed the finding into ``controls_removed``
    (:func:`aliasfuzz.campaign.known.control_removes` of both outcomes), which
    :func:`aliasfuzz.campaign.known.match` reads; ``ran`` holds controls already run on this
    task (issue -> outcome: :meth:`Pool._known_first`'s), taken as they are. Returns the
    worker's answer to the cut: ``{"blame": ...}``, or the death / internal error that
    ended it."""
    from aliasfuzz.campaign._judge import full_of

    if unconfirmed_replay(outcome):  # never written (driver.dismissal): nothing to cut
        return {"blame": {"stage": None, "stages": [], "trail": [], "reason": "not reproduced"}}
    out = worker.run({**task, "blame": outcome, "full": False})
    if "blame" not in out and out.get("verdict") == "crash":
        # the cut's own compiles killed the worker (heap corruption): once more with each
        # stage and control in a child interpreter (oracle.blame._Isolation)
        out = worker.run({**task, "blame": outcome, "full": False, "isolate": True})
    if "blame" in out and _uncut(outcome, out["blame"]):
        # no cut shows it: the pipeline once more in a fresh worker, as repro.py would run
        # it (driver.dismissal writes it only when that shows it again; H200 seed 32's
        # miscompile-unblamed-inductor-6d5082b08e, a wrong value its worker saw twice,
        # which every cut and its repro did not)
        worker.close()
        fresh = worker.run(task)
        out["blame"]["fresh"] = {k: fresh.get(k) for k in ("verdict", "check", "explanation")}
        if "verdict" not in fresh:  # an internal error: no answer, so no dismissal either
            out["blame"]["fresh"] = None
    if "blame" in out and task["pipeline"] == "inductor-reinplace":
        full = worker.run({**task, "pipeline": "inductor"})
        if "verdict" not in full:  # an internal error: say so rather than guess
            full = {"verdict": "unsupported", "check": None,
                    "explanation": str(full.get("summary") or "internal error")[:300]}
        out["blame"].update(full_of(outcome, full))
    if "blame" in out and bugs:
        from aliasfuzz.campaign.known import SAME_OPTIONS, control_removes

        controls, removed = {}, {}
        for bug in _control_candidates(bugs, task, outcome, out["blame"]):
            if not _control_changes(bug, task.get("options")):
                # the finding ran under the workaround already (audit 46, d585dcebc4: static
                # shapes, #198068's control dynamic=false): not that bug, nor its family
                controls[bug.issue], removed[bug.issue] = SAME_OPTIONS, False
                continue
            got = (ran or {}).get(bug.issue) or worker.run(
                {**task, "options": bug.control_options(task.get("options"))})
            controls[bug.issue] = got.get("verdict", "internal-error")
            removed[bug.issue] = control_removes(outcome.get("verdict"), got.get("verdict"),
                                                 outcome, got)
        if controls:
            out["blame"]["controls"] = controls
            out["blame"]["controls_removed"] = removed
    return out


def _control_changes(bug: Any, options: dict[str, Any] | None) -> bool:
    """Whether known bug ``bug``'s control changes the finding's pipeline ``options``: one
    that does not runs the finding again as it was, so it cannot remove it (not run)."""
    return _with_defaults(bug.control_options(options)) != _with_defaults(options)


def _with_defaults(options: dict[str, Any] | None) -> dict[str, Any]:
    """Pipeline options (a JSON dict of :class:`~aliasfuzz.passes.pipelines.PipelineOptions`
    fields) with every field present, its default where ``options`` leaves it out, so that
    ``{}`` and ``{"dynamic": False}`` compare equal."""
    from dataclasses import MISSING, fields

    from aliasfuzz.passes.pipelines import PipelineOptions

    out = {f.name: f.default if f.default is not MISSING else f.default_factory()
           for f in fields(PipelineOptions)}
    out.update(options or {})
    return out


def _control_candidates(
    bugs: Sequence[Any], task: dict[str, Any], outcome: dict[str, Any], blame: dict[str, Any]
) -> list[Any]:
    from aliasfuzz.campaign.corpus import roots
    from aliasfuzz.campaign.known import control_candidates
    from aliasfuzz.fuzz.ir import Program

    if not any(b.control for b in bugs) or not blame.get("stages"):
        return []
    program = Program.from_json(task["program"])
    keys = roots(program, outcome, task["pipeline"], blame)
    return control_candidates(list(bugs), keys, {op.op for op in program.body}, task["pipeline"],
                              str(outcome.get("explanation") or ""), program)


#: Lines of faulthandler's dump of a dying interpreter (``Fatal Python error: ...``, then
#: the threads' stacks, then the extension modules loaded).
_FAULTHANDLER = ("Fatal Python error", "Extension modules:")


class Pool:
    """Worker threads, each driving one :class:`Worker`; jobs in, messages out."""

    def __init__(self, opts: CampaignOptions, root: Path, bugs: Sequence[Any] = ()):
        self.jobs: queue.PriorityQueue = queue.PriorityQueue()
        self.results: queue.Queue = queue.Queue()
        self.opts, self._seq = opts, 0
        #: ``time.monotonic()`` after which findings are neither shrunk further nor blamed
        #: (the driver sets it from ``--time``: :func:`aliasfuzz.campaign.driver.tail_seconds`)
        self.tail_until: float | None = None
        # the known bugs whose controls a finding's blame runs (blame_in): the driver's
        self.bugs = [b for b in bugs if b.control]
        #: every known bug, for :meth:`_known_first`'s "is each root a known bug" (a root that
        #: matches a bug without a control is known too)
        self.all_bugs = list(bugs)
        # N workers each forking Inductor's pool of cpu_count compile processes would
        # oversubscribe the host: with several workers each compiles in its own process.
        env = {"TORCHINDUCTOR_COMPILE_THREADS": "1"} if opts.workers > 1 else {}
        cache = kernel_cache_dir(opts)
        if cache is not None:
            env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
            # builds a killed campaign left half-written (fresh user 55's B1: after kill -9
            # and --resume, "main.so: file too short" was filed as a new crash)
            remove_torn(cache)
        #: the GPUs a CUDA campaign's workers are spread over (:mod:`.gpus`), worker k on
        #: ``gpus[k % len(gpus)]``; empty on CPU (workers see what the driver sees)
        self.gpus = visible_gpus() if opts.device == "cuda" else []
        self.workers = [
            Worker(
                root / f"w{k}",
                timeout=opts.timeout,
                recycle=opts.recycle,
                device=opts.device,
                env={**env, **worker_gpu(k, self.gpus)},  # kept by every restart
            )
            for k in range(opts.workers)
        ]
        self.threads = [
            threading.Thread(target=self._loop, args=(w,), daemon=True) for w in self.workers
        ]
        for t in self.threads:
            t.start()

    def workers_per_gpu(self) -> list[int]:
        """The number of workers on each GPU of :attr:`gpus`."""
        return [len(range(g, len(self.workers), len(self.gpus))) for g in range(len(self.gpus))]

    def submit(self, priority: int, job: tuple) -> None:
        self._seq += 1
        self.jobs.put((priority, self._seq, job))

    def _task(self, program: Program, pipeline: str) -> dict[str, Any]:
        return {
            "program": program.to_json(),
            "pipeline": pipeline,
            "device": self.opts.device,
            "options": task_options(self.opts.pipeline_options, pipeline, program),
        }

    def _loop(self, worker: Worker) -> None:
        try:
            self._serve(worker)
        except BaseException:  # a harness bug: handed to the main thread, which re-raises
            import traceback

            self.results.put(("fatal", None, None, traceback.format_exc(), None))

    def _serve(self, worker: Worker) -> None:
        while True:
            _, _, job = self.jobs.get()
            if job is None:
                worker.close()
                return
            kind, i, pipeline, program, outcome = job
            if kind == "task":
                out = self._timed_run(worker, program, pipeline)
                self.results.put(("task", i, pipeline, program, out))
            elif kind == "group":
                for p, out in self._group(worker, program, list(pipeline)).items():
                    self.results.put(("task", i, p, program, out))
            elif kind == "confirm":
                self.results.put(("confirmed", i, pipeline, (program, outcome),
                                  self._confirm(worker, program, pipeline, outcome)))
            elif kind == "follow":
                self.results.put(self._follow(worker, i, pipeline, program, outcome))
            else:  # "shrink" (budget 0 with --no-shrink): minimize, then blame
                self.results.put(self._shrink(worker, i, pipeline, program, outcome))

    def _confirm(self, worker: Worker, program: Program, pipeline: str,
                 outcome: dict[str, Any]) -> dict[str, Any]:
        """The re-run of a task whose outcome needs confirming
        (:func:`~aliasfuzz.campaign.driver.needs_confirmation`, or a heap death,
        :func:`aliasfuzz.oracle.heap.may_be_corruption`). Such a death is asked about first by
        running the pipeline alone in child interpreters (:func:`aliasfuzz.oracle.heap.confirm`);
        when that shows nothing, an internal error stands (except a worker killed from
        outside, :data:`~aliasfuzz.campaign.worker.OUTSIDE_SIGNALS`: its program was never
        judged) and a crash is re-run in a fresh worker (as every other death is; a heap
        death there is asked about too). The
        costs: the first run's, and the whole re-run as one stage."""
        t0 = time.perf_counter()
        task = self._task(program, pipeline)
        out = None
        if may_be_corruption(outcome):  # the pipeline alone, then glibc checks the heap
            out = confirm_heap(program, pipeline, self.opts.device, task["options"], outcome,
                               seconds=self.opts.timeout)
        if out is None and ("internal_error" not in outcome
                            or outcome.get("check") in OUTSIDE_SIGNALS):
            worker.close()  # a fresh child: nothing left from earlier tasks or signals
            out = worker.run(task)
            if may_be_corruption(out):
                out = confirm_heap(program, pipeline, self.opts.device, task["options"],
                                   out, seconds=self.opts.timeout) or out
        out = out or outcome
        return {**out, "costs": {**(outcome.get("costs") or {}),
                                 "crash.rerun": time.perf_counter() - t0}}

    def late(self) -> bool:
        """Whether the campaign's time for shrinking and blaming is over (:attr:`tail_until`)."""
        return self.tail_until is not None and time.monotonic() >= self.tail_until

    def _shrink(self, worker: Worker, i: int, pipeline: str, program: Program,
                outcome: dict[str, Any], note: dict[str, Any] | None = None,
                before: float = 0.0) -> tuple:
        """The ``shrunk`` message of a finding minimized on its own pipeline, then blamed;
        ``before``: seconds already spent on it (a follower's failed try), counted as
        shrinking; ``note`` goes with the message (the driver journals it). Once
        :meth:`late`, the finding is kept as it is: the shrink stops with what it has (none
        starts) and no blame runs; ``note["budget_spent"]`` says what was left out."""
        budget = self.opts.shrink_budget if self.opts.shrink else 0
        original = program.dumps()

        def step(p: Program) -> dict[str, Any]:
            if not outcome.get("heap"):
                return self._shrink_step(worker, p, pipeline, i, outcome)
            # confirmed in child interpreters, and so is each candidate; the finding's own
            # confirmation is its replay: asked again, glibc could miss the corruption and
            # the shrinker would dismiss a confirmed finding as unreproduced
            return outcome if p.dumps() == original else self._heap_step(p, pipeline, outcome)

        if outcome.get("heap") and outcome.get("heap") != "static":  # a static one: one
            budget = min(budget, HEAP_SHRINK_BUDGET)  # child per candidate, deterministic
        late_before = self.late()
        if late_before:
            budget = 0
        cut: list[bool] = []

        def stop() -> bool:  # asked before each candidate after the replay
            if self.late():
                cut.append(True)
            return bool(cut)

        t0 = time.perf_counter()
        if budget and not outcome.get("heap") and self.opts.known_first:
            known = self._known_first(worker, i, pipeline, program, outcome)
            if known is not None:
                blame, issue = known
                spent_s = {"shrink": before, "known_first": time.perf_counter() - t0}
                note = {**(note or {}), "known_first": issue}
                # no shrink execution ran (its controls' runs are the known_first seconds):
                # fresh user 36 read the count of controls tried as shrink_executions
                return ("shrunk", i, pipeline, (program, program, 0, blame, spent_s, note),
                        outcome)
            before += time.perf_counter() - t0  # a try that did not settle it: shrinking's
            t0 = time.perf_counter()
        small, sout, spent = shrink(program, outcome, step, budget, stop)
        t1 = time.perf_counter()
        if self.late():
            what = ("not shrunk, not blamed" if late_before and self.opts.shrink else
                    "shrink cut short, not blamed" if cut else "not blamed")
            note = {**(note or {}), "budget_spent": what}
            blame = {"stage": None, "stages": [], "trail": [],
                     "reason": f"the campaign's time budget (--time) was spent: {what}"}
        else:
            blame = self._blame(worker, small, pipeline, sout, i)
        spent_s = {"shrink": before + t1 - t0, "blame": time.perf_counter() - t1}
        return ("shrunk", i, pipeline, (program, small, spent, blame, spent_s, note or {}),
                sout)

    def _known_first(self, worker: Worker, i: int, pipeline: str, program: Program,
                     outcome: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        """``(blame, issue)`` when finding ``outcome`` of the unshrunk ``program`` is a
        sighting of known bug ``issue`` (its first root's) whose corpus entry exists, so that
        shrinking it would only add a hit to that entry; None (shrink it) otherwise.

        Issue 16: campaign 34 shrank one known crash (#198095, whose workaround is a
        ``control``) 29 times, 102 of its 1820 worker-seconds. The rule is the one a shrunk
        finding meets (:func:`aliasfuzz.campaign.known.match`), on the program as found:
        a candidate's control (:func:`~aliasfuzz.campaign.known.known_first_candidates`,
        its known entry already in ``--corpus``) removes the finding
        (:func:`~aliasfuzz.campaign.known.control_removes`), then the cut
        (:func:`blame_in`) blames stages each of whose root causes matches a known bug
        whose entry exists, and :func:`~aliasfuzz.campaign.driver.dismissal` would write
        it. Any step that fails sends the finding to the shrinker as before (its seconds
        counted as shrinking); only bugs with a control are tried, because a bug matched by
        fields alone could hide a new root among an unshrunk program's incidental ops."""
        from aliasfuzz.campaign.corpus import _features, entry_id, known_root, roots
        from aliasfuzz.campaign.driver import confirmed_roots, dismissal
        from aliasfuzz.campaign.known import control_removes, known_first_candidates, match

        corpus = Path(self.opts.corpus)
        verdict = str(outcome.get("verdict"))

        def filed(stage: str, issue: str) -> bool:
            root = known_root({"stage": stage, "verdict": verdict}, issue)
            return (corpus / entry_id(root) / "meta.json").is_file()

        ops = {op.op for op in program.body}
        cands = [b for b in known_first_candidates(self.bugs, verdict, pipeline, ops,
                                                   _features(program),
                                                   str(outcome.get("explanation") or ""), program)
                 if filed(b.stage, b.issue)]
        if not cands:
            return None
        task = self._task(program, pipeline)
        for bug in cands:
            if not _control_changes(bug, task.get("options")):
                continue  # the same run again: it cannot remove the finding
            got = worker.run({**task, "options": bug.control_options(task.get("options"))})
            if not control_removes(verdict, got.get("verdict"), outcome, got):
                continue
            blame = self._blame(worker, program, pipeline, outcome, i, {bug.issue: got})
            if not blame.get("stages") or dismissal(outcome, pipeline, blame) is not None:
                return None
            kept = confirmed_roots(outcome, pipeline, blame)
            issues = []
            for root in roots(program, outcome, pipeline, kept):
                hit, _ = match(self.all_bugs, root, ops, {pipeline}, kept.get("controls"),
                               kept.get("controls_removed"), str(outcome.get("explanation") or ""),
                               program=program)
                if hit is None or not filed(root["stage"], hit.issue):
                    return None
                issues.append(hit.issue)
            return blame, issues[0]
        return None

    def _follow(self, worker: Worker, i: int, pipeline: str, program: Program,
                job: dict[str, Any]) -> tuple:
        """A follower's ``shrunk`` message (:mod:`aliasfuzz.campaign.follow`): the leader's
        shrunk program ``job["small"]`` run once on this pipeline and blamed here, kept
        when :func:`~aliasfuzz.campaign.follow.accepts` holds; else the finding is shrunk
        on its own (:meth:`_shrink`), the try's seconds counted as shrinking."""
        outcome, small = job["outcome"], job["small"]
        if self.late() or outcome.get("heap"):  # kept as found (:meth:`_shrink`); a heap
            # finding's candidate is never run in a worker (:meth:`_heap_step`)
            return self._shrink(worker, i, pipeline, program, outcome)
        t0 = time.perf_counter()
        sout = self._shrink_step(worker, small, pipeline, i, outcome)
        t1 = time.perf_counter()
        if same_failure(outcome, sout):
            blame = self._blame(worker, small, pipeline, sout, i)
            if accepts(outcome, sout, job["stages"], blame):
                spent_s = {"shrink": t1 - t0, "blame": time.perf_counter() - t1}
                note = {"follows": job["pipeline"]}
                return ("shrunk", i, pipeline, (program, small, 1, blame, spent_s, note), sout)
        note = {"follow_refused": job["pipeline"]}
        return self._shrink(worker, i, pipeline, program, outcome, note,
                            time.perf_counter() - t0)

    def _group(
        self, worker: Worker, program: Program, pipelines: list[str]
    ) -> dict[str, dict[str, Any]]:
        """Outcomes of ``program`` under ``pipelines`` from one worker task (a timeout of
        the per-pipeline timeout times their number); the task's costs go with the first
        pipeline's outcome. A task that did not answer every pipeline (a death, a hang, an
        internal error) is run again pipeline by pipeline, each on its own as without
        sharing; its lost seconds count as ``shared.lost``."""
        t0, started = time.perf_counter(), worker.start_seconds
        task = {
            "program": program.to_json(),
            "pipelines": pipelines,
            "device": self.opts.device,
            "options": {p: task_options(self.opts.pipeline_options, p, program)
                        for p in pipelines},
        }
        out = worker.run(task, timeout=self.opts.timeout * len(pipelines))
        wall = time.perf_counter() - t0
        outcomes = out.get("outcomes")
        if not isinstance(outcomes, dict) or set(outcomes) != set(pipelines):
            alone = {p: self._timed_run(worker, program, p) for p in pipelines}
            first = alone[pipelines[0]]["costs"]
            first["shared.lost"] = first.get("shared.lost", 0.0) + wall
            return alone
        costs = dict(out.get("costs") or {})
        start = worker.start_seconds - started
        costs["worker.ipc"] = max(0.0, wall - start - sum(costs.values()))
        if start > 0:
            costs["worker.start"] = start
        outcomes[pipelines[0]]["costs"] = costs
        return outcomes

    def _timed_run(self, worker: Worker, program: Program, pipeline: str) -> dict[str, Any]:
        """``worker.run`` of one task, its outcome's ``costs`` completed on this side:
        ``worker.start`` (a child started for it) and ``worker.ipc`` (the round trip's time
        that the child's stages do not account for: pipes, JSON, scheduling)."""
        t0, started = time.perf_counter(), worker.start_seconds
        out = worker.run(self._task(program, pipeline))
        wall = time.perf_counter() - t0
        stages = dict(out.get("costs") or {})
        start = worker.start_seconds - started
        stages["worker.ipc"] = max(0.0, wall - start - sum(stages.values()))
        if start > 0:
            stages["worker.start"] = start
        out["costs"] = stages
        return out

    def _heap_step(self, program: Program, pipeline: str, outcome: dict[str, Any]) -> dict[str, Any]:
        """A shrink candidate of a heap-corruption finding, asked as the finding was
        (:func:`aliasfuzz.oracle.heap.confirm`: the pipeline alone in child interpreters that
        check the heap, eager's as the control), never in a worker, where a run of it may die
        in aliasfuzz or survive with wrong values. ``ok`` when nothing is shown (the
        candidate is dropped; glibc misses some corruptions, so a minimum may be left
        bigger, never wrong). A death by the other heap signal (glibc's abort or the
        corrupted pointer's fault: which comes first is chance) is the same failure."""
        # the explanation's last part is the worker's death that first raised the question
        died = str(outcome.get("explanation") or "").split(DIED_OF, 1)[-1]
        # a finding shown by an out-of-bounds view in Inductor's wrapper keeps a candidate
        # only when it shows one too (one child, deterministic); glibc's children are not
        # asked, they would accept another corruption as the same bug
        got = confirm_heap(program, pipeline, self.opts.device,
                           self._task(program, pipeline)["options"], {"summary": died},
                           static_only=outcome.get("heap") == "static")
        if got is None:
            return {"verdict": "ok"}
        if got["check"] in CORRUPTION_CHECKS and outcome.get("check") in CORRUPTION_CHECKS:
            got = {**got, "check": outcome["check"]}
        return got

    def _shrink_step(
        self, worker: Worker, program: Program, pipeline: str, i: int,
        found: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A shrink candidate's outcome, run in ``worker``. ``found``: the outcome of the
        finding being shrunk; when it is a death by a signal, a candidate whose worker dies
        in aliasfuzz by a signal that heap corruption explains
        (:func:`~aliasfuzz.oracle.heap.may_be_corruption`) fails the step without counting as
        aliasfuzz's internal error: campaign 26 counted one, a candidate of its SIGSEGV
        finding 20e8d6ba4b (a program whose compiled code corrupts the heap, alone in child
        interpreters too) that killed its worker in the oracle's next eager run."""
        out = worker.run(self._task(program, pipeline))
        out.pop("costs", None)  # a step's time is the shrink's (timed as a whole)
        dying = str((found or {}).get("check") or "").startswith("signal:")
        if "internal_error" in out and (HEAP_MESSAGE in str(out.get("summary") or "")
                                        or (dying and may_be_corruption(out))):
            # glibc found the heap corrupted after the run (oracle.heap), or a candidate of
            # a finding that kills its process did: the step fails, keeping the signal, so
            # that a replay dying this way does not dismiss the finding
            # (shrink.unconfirmed_replay); not aliasfuzz's error, not counted as one
            return {"verdict": "internal-error", "check": out.get("check")}
        if "internal_error" in out:  # logged and counted like a task's; the step fails
            self.results.put(("internal", i, pipeline, out, None))
            return {"verdict": "internal-error"}
        return out

    def _blame(
        self, worker: Worker, program: Program, pipeline: str, outcome: dict[str, Any], i: int,
        ran: dict[str, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Cut the finding's pipeline stage by stage (:func:`aliasfuzz.campaign._judge.blame`)
        in the worker; a worker that dies or hangs doing so leaves the finding unblamed.
        ``ran``: controls already run on the program (:func:`blame_in`)."""
        out = blame_in(worker, self._task(program, pipeline), outcome, self.bugs, ran)
        if "blame" in out:
            return out["blame"]
        if "internal_error" in out:
            self.results.put(("internal", i, pipeline, out, None))
            # the error's last line goes with the finding: campaign 22's c9602fbf04 was filed
            # unblamed by an ImportError of a source tree changed under the running campaign,
            # and only the run's internal-errors.log said so (audit 22 finding 7)
            said = str(out.get("internal_error") or "").strip().splitlines()
            if out.get("summary") and any(line.startswith(_FAULTHANDLER) for line in said):
                # a death's stacks are faulthandler's dump, whose last line lists the
                # extension modules loaded (audit 41: 7d0c3031ea's blame reason and docstring
                # read "Extension modules: numpy..."): the worker's one-line summary says more
                said = [str(out["summary"])]
            return {"stage": None, "stages": [], "trail": [],
                    "reason": "internal error while cutting the pipeline"
                              + (f" ({said[-1][:200]})" if said else "")}
        return {"stage": None, "stages": [], "trail": [],
                "reason": f"cutting the pipeline ended in {out.get('verdict')}: "
                          f"{out.get('explanation', '')}"}

    def close(self) -> None:
        """Stop the workers once every job submitted so far is done (a finished campaign's
        pool is idle: this is quick)."""
        for _ in self.threads:
            self.submit(99, None)
        for t in self.threads:
            t.join()

    def abandon(self, grace: float = ABANDON_GRACE) -> None:
        """Stop at once, for an interrupted campaign: drop the jobs not started, give the
        workers ``grace`` seconds to end the jobs in flight, then kill their children
        (:meth:`Worker.abandon`) and wait for the threads (a bounded wait: a thread stuck
        elsewhere is a daemon). What the abandoned jobs put on :attr:`results` is never
        read: the driver journals nothing after an interruption, so ``--resume`` runs
        exactly the tasks whose event is not in the journal, once (fresh user 22: SIGTERM
        waited about 40 s for an in-flight Inductor compile)."""
        while True:
            try:
                self.jobs.get_nowait()
            except queue.Empty:
                break
        for _ in self.threads:
            self.submit(99, None)
        self._join(grace)  # the jobs in flight may end politely
        for w in self.workers:
            w.abandon()
        self._join(ABANDON_GRACE)  # then their children are dead: the threads return

    def _join(self, seconds: float) -> None:
        """Wait for the worker threads, ``seconds`` in all (not each)."""
        end = time.monotonic() + seconds
        for t in self.threads:
            t.join(max(0.0, end - time.monotonic()))
