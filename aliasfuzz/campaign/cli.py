"""Subcommands ``run``, ``replay``, ``check`` and ``report`` (added by :func:`add_parsers`).

Output: one line per result on stdout, errors as one line on stderr. Exit codes:

* ``run``: 0 no new finding with a ``--fail-on`` verdict (default: miscompile), 1 at
  least one, 2 a user's mistake; 130 when interrupted (resume with ``--resume``).
* ``replay``: 0 every entry reproduces or is fixed, 1 some entry's verdict changed to
  another finding, 2 a corrupt entry (the others still run) or a bad path.
* ``check``: 0 every ``expect`` line holds (a pipeline without one, e.g. of ``--pipelines``
  on a file with no ``expect`` block, never fails it), 1 one is contradicted, 2 a bad file
  or an unknown pipeline in ``--pipelines``.
* ``report``: 0, or 2 when there is no such campaign, a corrupt corpus entry (as ``run``
  refuses it) or a ``--corpus`` holding none of the campaign's root-cause entries; some of
  them missing is a warning line on stderr, exit 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.journal import finding_entries, new_root
from aliasfuzz.errors import InvalidArgument, not_a_folder
from aliasfuzz.fuzz.limits import MAX_STATEMENTS_HELP

__all__ = ["add_parsers", "exit_now", "parse_seed"]


def parse_seed(text: str) -> int:
    """A seed flag's value (argparse ``type``), shared by ``run`` and ``sample``: an integer
    >= 0, or ``today`` (the date as YYYYMMDD, for nightly runs); raises
    :class:`argparse.ArgumentTypeError` (one line, exit 2) for anything else."""
    import time

    if text == "today":
        return int(time.strftime("%Y%m%d"))
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"invalid seed {text!r} (an integer >= 0 or 'today')")
    return int(text)


def activate_plugins(paths) -> list[str]:
    """Load pass plugins here and export them to workers (:func:`aliasfuzz.plugins.activate`)."""
    from aliasfuzz.plugins import activate

    return activate(paths)


def _add_plugin_flag(p) -> None:
    p.add_argument(
        "--plugin",
        action="append",
        metavar="FILE.py",
        help="pass plugin imported before any program runs (repeatable; see aliasfuzz.plugins)",
    )


def _run_flags(args) -> dict:
    """The campaign options given on the command line (None: not given)."""
    flags = {
        k: getattr(args, k)
        for k in (
            "programs",
            "time",
            "seed",
            "pipelines",
            "device",
            "workers",
            "timeout",
            "recycle",
            "fail_on",
            "corpus",
            "report",
            "shrink_budget",
            "max_statements",
            "kernel_cache",
            "mutate",
            "grad_share",
            "dynamic_share",
        )
    }
    flags["shrink"] = False if args.no_shrink else None
    flags["share_trace"] = True if args.share_trace else None
    flags["shrink_once"] = False if args.no_shrink_once else None
    flags["known_first"] = False if args.no_known_first else None
    flags["plugins"] = tuple(args.plugin) if args.plugin else None
    return flags


def _cmd_run(args) -> int:
    from aliasfuzz.campaign.options import (
        check_writable_dir,
        merge_options,
        resume_options,
    )

    resume = None
    if args.config and len(args.config) > 1:  # the last one was read, the others ignored
        raise InvalidArgument(f"--config given {len(args.config)} times "
                              f"({', '.join(args.config)}): give one file")
    args.config = args.config[0] if args.config else None
    flags = _run_flags(args)
    if args.resume is None:
        flags["state"] = args.state
        opts = merge_options(flags, args.config)
        # a bad value is a one-line error before torch is imported (seconds on a busy host)
        opts.validate()
        _check_named_corpus(opts.corpus, opts.source("corpus"))
    from aliasfuzz.campaign import _judge
    from aliasfuzz.campaign.corpus import list_entries
    from aliasfuzz.campaign.driver import (
        campaign_done,
        latest_failed,
        latest_unfinished,
        load_campaign,
        run_campaign,
    )
    from aliasfuzz.campaign.known import check_controls, load_known

    if args.resume is not None:
        state = args.state or ".aliasfuzz"
        resume = latest_unfinished(state) if args.resume == "latest" else Path(args.resume)
        if resume is None or not (resume / "options.json").exists():
            if args.resume != "latest":
                raise InvalidArgument(f"{resume}: not a resumable campaign directory "
                                      "(no options.json)")
            failed = latest_failed(state)
            hint = f" ({failed} failed: resume it with --resume {failed})" if failed else ""
            raise InvalidArgument(f"no unfinished campaign to resume under {state}{hint}")
        if args.config:
            raise InvalidArgument("--config cannot be used with --resume (options.json holds)")
        if campaign_done(resume):
            # fresh user 31's B1: resuming a done campaign ran nothing but appended a second
            # end event and rewrote its elapsed time and the history's throughput
            raise InvalidArgument(f"{resume}: that campaign is done, nothing to resume (start "
                                  "a new one; its findings are in the corpus already)")
        opts = resume_options(load_campaign(resume)[0], flags)
    opts.validate(_judge.pipeline_names())
    from aliasfuzz.campaign.corpus import mixed_sources, other_checkout

    note = other_checkout()
    # a process put together from two trees is refused next (run_campaign), by an error that
    # names both; the note's "run this checkout's own venv" was wrong advice when the user
    # already did and PYTHONPATH mixed them (fresh user 45's B6)
    if note is not None and mixed_sources() is None:
        print(note, file=sys.stderr)
    # every folder the campaign writes, checked before any work (nothing found is lost)
    if opts.report not in (None, "", "none"):
        check_writable_dir(opts.report, "--report")
    check_writable_dir(opts.corpus, "--corpus")
    check_writable_dir(opts.state, "--state")
    # a malformed known.toml, or a control naming an option torch lacks, fails before a
    # campaign folder exists
    check_controls(load_known(opts.corpus))
    # a corrupt entry would fail the campaign when its first finding is recorded beside it
    # (the fourteenth session's fresh user: the finding was kept only for --resume)
    _check_entries(opts.corpus, list_entries, _runnable_entry)
    opts.plugins = tuple(activate_plugins(opts.plugins))
    if resume is None:
        _note_fresh_default_corpus(opts.corpus)
        if set(opts.pipelines) == {"eager"} and mixed_sources() is None:
            # fresh user 51's B4: a clean "0 findings" from a campaign that cannot find any
            # (not beside the mixed-trees refusal the campaign then raises: the error alone)
            print("aliasfuzz: note: --pipelines eager runs the reference against itself: "
                  "it checks the harness (generation, eager runs, the journal) and finds "
                  "nothing; name a compiler pipeline to test one", file=sys.stderr)
        Path(opts.corpus).mkdir(parents=True, exist_ok=True)  # said once, not every campaign
    with _interruptible() as after:
        res = run_campaign(opts, resume=resume, show=not args.quiet)
        # from here on a SIGTERM or Ctrl-C ends the process with the campaign's own code
        # (fresh user 22 got 143 after the summary): its journal and history are written
        after["code"] = code = 130 if res.status == "interrupted" else 1 if res.failing else 0
        report = opts.report not in (None, "", "none") and res.status == "done"
        if report:  # until it is written, a SIGTERM says what was skipped (fresh user 24)
            after["unwritten"] = (
                f"aliasfuzz: stopped before the report was written; `aliasfuzz report "
                f"--state {opts.state} --corpus {opts.corpus} --campaign {res.id} --report "
                f"{Path(opts.report) / res.id}` writes it")
    gone = missing_entries(res.findings, opts.corpus)
    for f in sorted(res.findings, key=_finding_order):
        for line in finding_lines(f, set(gone)):
            print(line)
    # a campaign that found nothing says so too, as its report's card does (fresh user 41's B4)
    print(root_cause_line(res.findings, opts.corpus))
    if res.findings:
        if gone:  # deleted since it was written (before a --resume): the report marks them
            print(f"aliasfuzz: warning: --corpus {opts.corpus}: {_plural(len(gone), 'entry', 'entries')} "
                  f"named above {'is' if len(gone) == 1 else 'are'} not there ({', '.join(gone)}): "
                  "the journal's `task` event of each keeps its unshrunk program", file=sys.stderr)
    for line in summary_lines(res):
        print(line)
    if res.status == "interrupted":  # fresh user 24: nothing said how to go on
        # the campaign's own folder: `--resume --state` takes the latest unfinished campaign
        # of the state, another one when two share it (fresh user 45's B1)
        # fresh user 52's B5: "0 corpus entries written" beside a table of miscompiles read
        # as lost findings; those in flight are in the journal, filed when it resumes
        print(f"aliasfuzz: interrupted; `aliasfuzz run --resume {res.dir}` continues it (a "
              "finding still being confirmed or shrunk when it stopped is filed then: the "
              "journal keeps its program)", file=sys.stderr)
    if res.stages:
        from aliasfuzz.campaign.costs import format_table, table

        print(f"where the time went ({_plural(opts.workers, 'worker')} x {res.seconds:.1f} s):")
        print(format_table(table(res.stages, res.seconds, opts.workers, res.programs)))
    if res.gpus:
        from aliasfuzz.campaign.gpus import format_row

        for row in res.gpus:
            print(format_row(row))
    if res.flaky:
        print(
            f"note: {res.flaky} crash/timeout verdicts did not recur when re-run in a fresh "
            f"worker (flaky, not findings; see outcome.first in {res.dir / 'journal.jsonl'})"
        )
    for line in dismissed_notes(res):
        print(line)
    for e in res.internal:  # aliasfuzz's own failures: never findings, never hidden
        print(f"internal error: program {e['i']} on {e['pipeline']}: {e['summary']}")
    if res.internal_errors:
        print(
            f"aliasfuzz: {res.internal_errors} internal errors, see "
            f"{res.dir / 'internal-errors.log'}",
            file=sys.stderr,
        )
    if report:
        from aliasfuzz.report import write_report

        # a SIGTERM from the summary on ends the process at once (fresh user 22), but says
        # what was skipped and how to write it (fresh user 24 got no report, and no word)
        path = write_report(
            res.id, state=opts.state, corpus=opts.corpus, out=Path(opts.report) / res.id
        )
        after.pop("unwritten", None)
        print(f"report: {path}")
    return code


def finding_lines(f: dict, gone: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The console lines of finding ``f`` (a :class:`~aliasfuzz.campaign.driver.CampaignResult`
    finding): one per corpus entry it filed (``f["ids"]``), so that the ``root causes: N``
    line counts the lines above it. A finding whose blame found two departures (e.g.
    functionalization, then reinplace) files an entry per root cause; fresh user 24 saw 6
    root causes counted over 5 lines, the second entry named nowhere on the terminal. Each
    line gives its own entry's status, ``new`` (the headline's: no known bug), ``new corpus
    entry, known <issue>`` or ``in corpus`` (and ``known <issue>``)
    (``f["news"]``, ``f["knowns"]``; :func:`~aliasfuzz.campaign.journal.finding_entries`),
    and ``deleted since`` for an entry of ``gone`` (:func:`missing_entries`)."""
    stage = ",".join(f.get("stages") or []) or f"unblamed:{f['pipeline']}"  # the root's
    own = f.get("entry_stages") or []  # one per line, when the blame's stages are the entries'
    spent = f", time budget spent: {f['budget_spent']}" if f.get("budget_spent") else ""
    full = f" full:{f['full']}" if f.get("full") else ""
    entries = finding_entries(f)
    lines = []
    for k, e in enumerate(entries):
        # each entry's own status: "known #196657" on the line of an entry whose meta.json
        # says "known": null was a false claim (a fresh user's, from its sibling entry)
        # "new" is the headline's: new and no known bug; a known bug's first entry is a new
        # corpus entry, counted under "known upstream" (fresh user 40's B9 read "(new,
        # known ...)" above "0 new")
        status = (("new corpus entry" if e.known else "new") if e.new else "in corpus") + (
            f", known {e.known}" if e.known else "") + (
            ", deleted since" if e.id in gone else "")  # fresh user 41's B3
        first = entries[0].id if k else f.get("same_as")
        same = f", same program as {first}" if first else ""
        lines.append(f"finding {e.id} {f['verdict']} {f['pipeline']} check={f['check']} "
                     f"stage={own[k] if len(own) == len(entries) else stage}{full} "
                     f"({status}{spent}{same})")
    return lines


def missing_entries(findings: list[dict], corpus: str | Path) -> list[str]:
    """The entries ``findings`` name that are not folders of ``corpus`` (deleted since they
    were written: fresh user 39's B9 moved one away before ``--resume``, and the console
    still called it new), in first-named order."""
    ids = dict.fromkeys(e.id for f in findings for e in finding_entries(f))
    return [i for i in ids if not (Path(corpus) / i).is_dir()]


def root_cause_line(findings: list[dict], corpus: str | Path) -> str:
    """The console's root-cause headline of a campaign's ``findings`` (journal finding
    events), their entries read from ``corpus``: how many are new (new, not a known
    upstream bug, blamed: :func:`~aliasfuzz.campaign.journal.new_root`), known upstream,
    already in the corpus, left unblamed when the time budget was spent (only when some
    were), and how many corpus entries the campaign wrote."""
    pairs = [(f, e) for f in findings for e in finding_entries(f)]
    ids = {e.id for _, e in pairs}
    issues = {e.id: e.known for _, e in pairs if e.known}
    known = {i for i in ids if _entry_known(corpus, i, issues.get(i))}
    # an entry is new by its own id: a finding's other entry may be in the corpus
    fresh = {e.id for _, e in pairs if e.new}
    new = {e.id for f, e in pairs if new_root(f, e)} - known
    unblamed = fresh - known - new
    # "new" is new and not known upstream; a known bug's first entry is new to the corpus
    # too, and a reader of "0 new" did not expect an untracked folder (fresh user 38's B2):
    # the entries this campaign wrote are counted apart
    spent = (f", {len(unblamed)} left unblamed when the time budget was spent"
             if unblamed else "")
    return (f"root causes: {len(ids)} ({len(new)} new, {len(known)} known upstream, "
            f"{len(ids - fresh - known)} already in the corpus{spent}; "
            f"{_plural(len(fresh), 'corpus entry', 'corpus entries')} written)")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def summary_lines(res) -> list[str]:
    """The campaign's summary for the console: a headline (status, programs and how many of
    them were mutants, runs, seconds, throughput), then one line per pipeline with its
    verdict counts, most frequent first. ``res`` is a
    :class:`~aliasfuzz.campaign.driver.CampaignResult`. One line of every
    ``pipeline/verdict`` count was about 700 characters (fresh user 23)."""
    rate = res.programs / res.seconds if res.seconds else 0.0
    # programs some pipelines judged when the budget ran out: counted per pipeline below,
    # not in the headline's programs (fresh user 28's B2: the counts did not add up)
    part = (f", and {_plural(res.partial, 'program')} judged by some pipelines only"
            if res.partial else "")
    lines = [
        f"campaign {res.id} ({res.status}): {_plural(res.programs, 'program')} "
        f"({_plural(res.mutants, 'mutant')}){part}, {_plural(res.tasks, 'run')} in "
        f"{res.seconds:.1f} s ({rate:.2f} programs/s); verdicts per pipeline:"
    ]
    per: dict[str, list[tuple[str, int]]] = {}
    for (p, v), n in res.verdicts.items():
        per.setdefault(p, []).append((v, n))
    width = max((len(p) for p in per), default=0)
    for p in sorted(per):
        counts = ", ".join(f"{v} {n}" for v, n in sorted(per[p], key=lambda x: (-x[1], x[0])))
        lines.append(f"  {p + ':':<{width + 1}} {counts}")
    return lines


def dismissed_notes(res) -> list[str]:
    """A ``note:`` line for the findings the campaign did not write because they did not
    show again (``res.unreproduced``), then one per case of fast-path finding it did not write
    (:func:`aliasfuzz.campaign.driver.fast_path_only`): those full ``torch.compile`` does
    not show (harness only) and those it cannot run on this host (unconfirmed), each with
    its counts per verdict (``res.fast_path``, a
    :class:`~aliasfuzz.campaign.driver.CampaignResult`'s). One line for both cases, "1
    fast-path crashes", said neither which case nor the right number (fresh user 23)."""
    where = (f"the report's \"Findings not written\", or \"dismissed\" in "
             f"{res.dir / 'journal.jsonl'}")
    out = []
    if res.duplicates:
        n = res.duplicates
        out.append(f"note: {_plural(n, 'finding')} not shrunk: {'its' if n == 1 else 'their'} "
                   "pipeline, verdict, check, decision kinds, op kinds and ops are an earlier "
                   "finding's (a coarse key, taken before shrinking and blame; see the report's "
                   "\"Findings not written\", or \"duplicate\" in the journal)")
    if res.known_first:
        n = res.known_first
        bugs = ", ".join(f"{issue} x{k}" for issue, k in sorted(
            res.known_first_by.items(), key=lambda x: (-x[1], x[0])))
        out.append(f"note: {_plural(n, 'finding')} recorded as a sighting of a known bug, not "
                   f"shrunk ({bugs}): the bug's workaround (known.toml's "
                   "control) removes " + ("it" if n == 1 else "each") + ", cutting the pipeline "
                   "blames only known bugs, and their entries are in the corpus "
                   "(\"known_first\" in the journal; --no-known-first shrinks them)")
    if res.unreproduced:  # driver.dismissal's flaky kind: not the re-run crashes above
        by = res.unreproduced_by or {"other": res.unreproduced}
        from aliasfuzz.campaign.driver import FLAKY_CAUSES

        rank = list(FLAKY_CAUSES)  # by count, then in FLAKY_CAUSES's order, others last
        causes = "; ".join(f"{FLAKY_CAUSES.get(cause, 'another cause')}"
                           + (f" ({n})" if len(by) > 1 else "") for cause, n in sorted(
            by.items(), key=lambda x: (-x[1], rank.index(x[0]) if x[0] in rank else len(rank))))
        # "1 finding not written, not findings (1 no stage cut ...)" read badly (fresh user 36's B6)
        out.append(f"note: {_plural(res.unreproduced, 'finding')} not written, not confirmed: "
                   f"{causes}; each one's reason is in {where}")
    for case, says in (("hidden", "that full torch.compile does not show (harness only"),
                       ("unsupported", "that full torch.compile cannot run on this host "
                        "(unconfirmed")):
        rows = sorted((v, n) for (c, v), n in res.fast_path.items() if c == case and n)
        if rows:
            total = sum(n for _, n in rows)
            counts = ", ".join(
                _plural(n, f"fast-path {v}", f"fast-path {v}{'es' if v.endswith('sh') else 's'}")
                for v, n in rows)
            out.append(f"note: {counts} {says}, not {'a finding' if total == 1 else 'findings'}"
                       f"; {where})")
    return out


def _check_named_corpus(corpus: str, source: str = "--corpus") -> None:
    """A ``--corpus`` (flag or config) other than the default must exist: a mistyped one
    would start a campaign against an empty corpus, every finding in it filed as new
    (fresh user 20). The default ``corpus`` is created when absent. ``source`` names where
    the value came from (:meth:`~aliasfuzz.campaign.options.CampaignOptions.source`)."""
    from aliasfuzz.campaign.options import CampaignOptions

    if Path(corpus) != Path(CampaignOptions().corpus) and not Path(corpus).exists():
        raise InvalidArgument(f"{source} {corpus}: no such directory (create it to start an "
                              "empty corpus there)")


def _note_fresh_default_corpus(corpus: str) -> None:
    """Say so on stderr when the default ``--corpus`` does not exist here and is about to be
    created, while this checkout has a corpus of its own: ``run`` from ``bench/`` started an
    empty ``./corpus`` without a word and filed an entry the checkout holds as new (fresh
    user 45's B5). Called once every check has passed, just before the campaign starts."""
    from aliasfuzz.campaign.known import DEFAULT

    checkout = DEFAULT.parent
    if not Path(corpus).exists() and checkout.is_dir() and Path(corpus).resolve() != checkout:
        print(f"aliasfuzz: note: no ./{corpus} here: starting an empty corpus in "
              f"{Path(corpus).resolve()} (this checkout's corpus is {checkout}: "
              f"--corpus {checkout} adds to it)", file=sys.stderr)


def _check_entries(corpus: str, list_entries, load_entry) -> None:
    """Raise one :class:`InvalidArgument` naming every entry of ``corpus`` that does not
    load, the first one's reason, and the command that gives each reason: a user fixed
    one entry per run when only the first was named (fresh user 20)."""
    bad = []
    for entry in list_entries(corpus):
        try:
            load_entry(entry)
        except InvalidArgument as e:
            bad.append((entry.name, str(e)))
    if bad:
        names = ", ".join(name for name, _ in bad)
        raise InvalidArgument(
            f"--corpus {corpus}: {len(bad)} corrupt entr{'y' if len(bad) == 1 else 'ies'} "
            f"({names}); first: {bad[0][1]}; `aliasfuzz replay {corpus}` says why for each")


def _runnable_entry(path: Path) -> Any:
    """:func:`aliasfuzz.campaign.corpus.load_entry`, and its ``expected.pipeline`` one this
    campaign can replay (a built-in or ``debug-*`` name, before torch is imported): ``run``
    took an entry ``replay`` refuses (fresh user 52's B3). Its device is not asked: a GPU
    campaign's entry stays in a corpus a CPU campaign reads. Raises
    :class:`InvalidArgument` naming the meta.json."""
    from aliasfuzz.campaign.corpus import load_entry
    from aliasfuzz.campaign.options import _unknown_pipeline

    entry = load_entry(path)
    said = _unknown_pipeline(entry.meta["expected"]["pipeline"], None)
    if said:
        raise InvalidArgument(f"{Path(path) / 'meta.json'}: {said} in expected.pipeline")
    return entry


def _entry_known(corpus: str, entry: str, issue: str | None = None) -> bool:
    """Whether corpus entry ``entry`` is a known upstream bug: its ``meta.json`` says, and
    for an entry that does not load (deleted before a ``--resume``), ``issue``, the known
    bug its finding events name, as the report's row reads it (fresh user 40's B6: the
    headline moved a deleted known entry to "already in the corpus" while its finding
    line still said "known")."""
    from aliasfuzz.campaign.corpus import load_entry

    try:
        return bool(load_entry(Path(corpus) / entry).meta.get("known"))
    except InvalidArgument:
        return bool(issue)


@contextlib.contextmanager
def _interruptible():
    """SIGTERM and SIGINT stop a campaign as Ctrl-C does (``interrupted``, exit 130,
    resumable): a batch scheduler's or CI's timeout sends SIGTERM, and a shell starts a
    background job with SIGINT ignored, so neither would otherwise reach the driver's
    ``KeyboardInterrupt`` handler. The driver then abandons the programs in flight
    (:meth:`aliasfuzz.campaign.pool.Pool.abandon`).

    Yields a dict: the block sets ``"code"`` once the campaign has returned. Then, instead
    of the previous handlers, both signals end the process at once with that code
    (:func:`exit_now`; the summary and report are all that is left to do, and everything
    resumable is written), until :func:`aliasfuzz.cli.main` restores the handlers it
    found: fresh user 22's SIGTERM after the summary gave 143, not the campaign's code.
    Without a code (an error on its way up) the previous handlers are restored here."""

    def stop(signum, frame):
        # one interruption: a second signal while the driver closes its workers and
        # journal would break that clean-up with a traceback (the fresh user's TERM, TERM)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    after: dict = {}
    try:
        yield after
    finally:
        for s, h in old.items():
            if "code" in after:  # replaces stop() with no moment of the old handler between
                signal.signal(s, lambda signum, frame: exit_now(after["code"],
                                                                after.get("unwritten")))
            else:
                signal.signal(s, h)


def exit_now(code: int, note: str | None = None) -> None:
    """End the process with ``code`` at once: ``note`` (what was left undone, if anything)
    on stderr, stdout and stderr flushed, no interpreter shutdown (nothing of a finished
    campaign needs it: the journal, the history and the report files are closed as they
    are written)."""
    import os

    if note:
        print(note, file=sys.stderr)

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    os._exit(code)


def _finding_order(f: dict) -> tuple:
    """New root causes first, then known upstream bugs, then those already in the corpus: a
    finding of several entries by its first in that order (its lines stay together)."""
    return min((not e.new or bool(e.known), not e.new, bool(e.known))
               for e in finding_entries(f)) + (f["id"],)


def _add_run(sub) -> None:
    from aliasfuzz.campaign.options import DEFAULT_PIPELINES

    p = sub.add_parser("run", help="run a fuzzing campaign (default: ~2 min on CPU)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--time", type=float, metavar="SECONDS",
                        help="wall-clock budget of the whole campaign (a resumed one counts "
                        "the time before its interruption): no program starts after it; "
                        "programs in flight are still judged, and findings shrunk and "
                        "blamed for a tenth of the budget more (at least 30 s), then "
                        "written as they are, marked 'time budget spent'")
    budget.add_argument("--programs", type=int, metavar="N", help="number of programs")
    p.add_argument("--seed", type=parse_seed, help="campaign seed (default 0); 'today' is YYYYMMDD")
    p.add_argument(
        "--pipelines",
        help=f"comma list (default: {','.join(DEFAULT_PIPELINES)})",
    )
    p.add_argument("--device", help="cpu (default) or cuda")
    p.add_argument("--workers", type=int,
                   help="worker processes (default: min(4, cores); with --device cuda and N "
                        "GPUs, min(4, cores // N) per GPU: worker k runs on GPU k mod N "
                        "through CUDA_VISIBLE_DEVICES)")
    p.add_argument("--timeout", type=float, help="seconds per program and pipeline (120)")
    p.add_argument("--recycle", type=int, help="tasks before a worker is replaced (200)")
    p.add_argument("--fail-on", help="verdicts whose new findings exit 1 (miscompile)")
    p.add_argument("--corpus", help="corpus directory (corpus, created when absent); named, "
                   "it must exist (mkdir a new one first)")
    p.add_argument("--report", help="report directory (reports), or 'none'")
    p.add_argument("--state", help="history and campaign journals (.aliasfuzz)")
    p.add_argument("--config", action="append",
                   help="TOML file with the same options ([run] table); once")
    p.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        metavar="DIR",
        help="resume the last interrupted campaign under --state (give the same --state as "
        "the run had, else the default .aliasfuzz is searched), or DIR, with its saved options; one "
        "that failed with an internal error is marked 'failed' and only resumed when named "
        "as DIR. Flags given with --resume: --time/--programs replace the budget (the whole "
        "campaign's: seconds already spent count, done programs are not rerun), --workers, "
        "--timeout, --recycle, --fail-on and --report apply to the rest; others (they would "
        "change which programs run or how) are an error",
    )
    p.add_argument("--no-shrink", action="store_true", help="write findings unminimized")
    p.add_argument("--share-trace", action="store_true",
                   help="one Dynamo capture per program for its Dynamo pipelines (off)")
    p.add_argument("--no-shrink-once", action="store_true",
                   help="shrink a program's failure on every pipeline that shows it, not once "
                   "for all (aliasfuzz.campaign.follow)")
    p.add_argument("--no-known-first", action="store_true",
                   help="shrink every finding, also one a known bug's workaround removes "
                   "whose bug is in the corpus already (aliasfuzz.campaign.pool)")
    p.add_argument("--kernel-cache", choices=("shared", "worker"),
                   help="Inductor's kernel cache: one under --state for all workers and "
                   "campaigns (shared, the default) or one per worker")
    p.add_argument("--shrink-budget", type=int, help="executions per finding's shrink (40)")
    p.add_argument("--max-statements", type=int, help=MAX_STATEMENTS_HELP)
    p.add_argument("--mutate", type=float, metavar="SHARE",
                   help="share of programs made by mutating corpus entries and seeds instead of "
                   "generating them fresh, 0 to 1 (0.33; 0: off, every program fresh; "
                   "aliasfuzz.fuzz.mutate)")
    p.add_argument("--grad-share", type=float, metavar="SHARE",
                   help="share of generated programs whose unwritten float inputs require grad, "
                   "their gradients compared on every torch.compile pipeline, 0 to 1 (0.25; 0: off)")
    p.add_argument("--dynamic-share", type=float, metavar="SHARE",
                   help="share of programs compiled with dynamic shapes (torch.compile(dynamic=True)) "
                   "on every torch.compile pipeline, 0 to 1 (0.1; 0: off)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    _add_plugin_flag(p)
    p.set_defaults(func=_cmd_run)


def _cmd_replay(args) -> int:
    import math

    from aliasfuzz.campaign.options import MIN_TIMEOUT

    if not (math.isfinite(args.timeout) and args.timeout >= MIN_TIMEOUT):
        # fresh user 49's B6: --timeout 1 called a good entry "changed ... timeout", as run's
        # floor says (a compile takes seconds)
        raise InvalidArgument(f"--timeout must be a finite number of at least {MIN_TIMEOUT:g} "
                              "seconds: a compile takes seconds, and a shorter limit reads as "
                              "the entry's own hang")
    for path in args.paths or ["corpus"]:  # before torch is imported: seconds on a busy host
        if not Path(path).is_dir():
            raise InvalidArgument(not_a_folder(path))
    from aliasfuzz.campaign.known import load_known

    for path in map(Path, args.paths or ["corpus"]):
        # the known.toml beside the entries, checked as run checks it: replay is how an edit
        # to it is tried without a campaign (fresh user 20)
        entry = (path / "meta.json").exists() or (path / "program.json").exists()
        load_known(path.parent if entry else path)
    from aliasfuzz.campaign.replay import replay

    activate_plugins(args.plugin or ())
    return replay(args.paths or ["corpus"], timeout=args.timeout)


def _add_replay(sub) -> None:
    p = sub.add_parser("replay", help="re-run corpus entries: reproduces / fixed / changed")
    p.add_argument("paths", nargs="*", help="entry folders or corpus folders (corpus)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per entry (120)")
    _add_plugin_flag(p)
    p.set_defaults(func=_cmd_replay)


def _cmd_report(args) -> int:
    from aliasfuzz.campaign.options import check_writable_dir
    from aliasfuzz.report import latest_campaign, write_report

    if Path(args.state).exists() and not Path(args.state).is_dir():  # fresh user 49's B13
        raise InvalidArgument(f"--state {args.state}: not a directory")
    cid = args.campaign or latest_campaign(args.state)
    if cid is None:
        raise InvalidArgument(f"no campaign in {args.state}/history.sqlite")
    if args.corpus is not None and not Path(args.corpus).is_dir():
        # a report of a named corpus that is not there would list every root cause as
        # missing and overwrite a good report (the fourteenth session's fresh user); the
        # default one may be absent (a campaign that found nothing writes none)
        raise InvalidArgument(f"--corpus {args.corpus}: not a directory")
    out = Path(args.out) if args.out else _saved_report(args.state, cid)
    check_writable_dir(out, "--out")
    corpus = args.corpus if args.corpus is not None else _saved_corpus(args.state, cid)
    from aliasfuzz.campaign.known import load_known

    load_known(corpus)  # a malformed known.toml is the same one-line error as in run
    _check_report_corpus(cid, args.state, corpus)
    print(f"report: {write_report(cid, state=args.state, corpus=corpus, out=out)}")
    return 0


def _saved_corpus(state: str, cid: str) -> str:
    """The corpus campaign ``cid`` ran with (its ``options.json``), where ``report`` without
    ``--corpus`` looks: ``corpus`` when that one is not a folder (any more) or the options
    cannot be read. A campaign run with ``--corpus elsewhere`` was refused by a later
    ``report`` that looked in ``corpus/`` (a fresh user's)."""
    saved = _recorded_corpus(state, cid)
    return saved if saved is not None and Path(saved).is_dir() else "corpus"


def _saved_report(state: str, cid: str) -> Path:
    """Where ``report`` without ``--out`` writes campaign ``cid``'s report: the folder its
    ``run --report R`` wrote it to (``R/<cid>``, from ``options.json``) when ``R`` is a
    folder, else ``reports/<cid>`` (fresh user 41's B2: a campaign kept out of the checkout
    got its report rewritten into the checkout's reports/, the first copy left stale)."""
    saved = _recorded_option(state, cid, "report")
    if saved is not None and saved != "none" and Path(saved).is_dir():
        return Path(saved) / cid
    return Path("reports") / cid


def _recorded_corpus(state: str, cid: str) -> str | None:
    """The ``corpus`` option campaign ``cid``'s ``options.json`` records, or None when it
    cannot be read."""
    return _recorded_option(state, cid, "corpus")


def _recorded_option(state: str, cid: str, key: str) -> str | None:
    """Option ``key`` (a folder) of campaign ``cid``'s ``options.json``, or None when it
    cannot be read or is not a non-empty string."""
    try:
        saved = json.loads((Path(state) / "runs" / cid / "options.json").read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return saved if isinstance(saved, str) and saved else None


def _check_report_corpus(cid: str, state: str, corpus: str) -> None:
    """Refuse, before anything is written, a corpus that ``report`` would turn into a report
    with silent holes (fresh user 21: exit 0, nothing on stderr, no issue draft for the new
    root cause whose ``meta.json`` was corrupt): a corrupt entry (as ``run`` refuses it,
    :func:`_check_entries`), or a corpus holding none of the campaign's root-cause entries
    (the wrong ``--corpus``, or the default one for a campaign run with another). Some of
    them missing (entries deleted since) from the corpus the campaign recorded is one warning
    line on stderr; the report marks those rows. So is all of them missing from it: that one
    is not the wrong one (fresh user 40's B7 was told to name the corpus it had named). Some
    missing from another corpus while the recorded one exists is refused (fresh user 47's
    B6: another campaign's corpus rewrote a good report). Raises :class:`InvalidArgument`."""
    from aliasfuzz.campaign.corpus import list_entries, load_entry
    from aliasfuzz.report.data import root_ids

    ids = root_ids(cid, state=state)
    _check_entries(corpus, list_entries, load_entry)
    missing = [i for i in ids if not (Path(corpus) / i).is_dir()]
    if not missing:
        return
    names = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    recorded = _recorded_corpus(state, cid)
    own = recorded is not None and Path(recorded).resolve() == Path(corpus).resolve()
    if len(missing) == len(ids) and not own:
        raise InvalidArgument(
            f"--corpus {corpus}: holds none of the {len(ids)} root-cause entries of campaign "
            f"{cid} ({names}); name the corpus it ran with (--corpus)")
    if recorded is not None and not own and Path(recorded).is_dir():
        # another campaign's corpus sharing some entries rewrote a good report with rows
        # "deleted since" that never were there (fresh user 47's B6)
        raise InvalidArgument(
            f"--corpus {corpus}: lacks {len(missing)} of the {len(ids)} root-cause entries of "
            f"campaign {cid} ({names}), which ran with --corpus {recorded}: name that one")
    print(f"aliasfuzz: warning: --corpus {corpus}: {len(missing)} of the {len(ids)} root-cause "
          f"entries of campaign {cid} {'is' if len(missing) == 1 else 'are'} not there "
          f"({names}); {'its row says' if len(missing) == 1 else 'their rows say'} so",
          file=sys.stderr)


def _add_report(sub) -> None:
    p = sub.add_parser("report", help="write the HTML report and summary.json of a campaign")
    p.add_argument("--campaign", help="campaign id (default: the latest)")
    p.add_argument("--state", default=".aliasfuzz", help="state directory (.aliasfuzz)")
    p.add_argument("--corpus", help="corpus directory (default: the one the campaign ran with, "
                   "else corpus); named, it must exist")
    # --report is run's name for the same folder: a user who knew run's was refused
    # (fresh user 22)
    p.add_argument("--out", "--report", dest="out", metavar="DIR",
                   help="output directory (the campaign's own: R/<campaign> of its run --report R, "
                        "else reports/<campaign>); --report is run's name, but "
                   "here DIR is the campaign's own folder (run --report R writes R/<campaign>)")
    p.set_defaults(func=_cmd_report)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``run``, ``replay``, ``check`` (:mod:`.check_cli`) and ``report`` on ``sub``."""
    from aliasfuzz.campaign.check_cli import add_parser as _add_check

    for add in (_add_run, _add_replay, _add_check, _add_report):
        add(sub)
