"""The data of a campaign report (also written as ``summary.json``), from the journal,
the corpus and the history. Everything here is JSON data; nothing runs a program.

``summary_version`` 3: ``root_causes`` (one row per corpus entry the campaign's
``finding`` events name, see :func:`root_causes`), ``counts`` (raw findings: runs judged a
finding; shrunk findings: ``finding`` events; root causes, by status; ``written``: the
corpus entries the campaign wrote, known bugs' first entries too; ``budget_spent``: the
shrunk findings written unblamed when the time budget was spent, their shrink cut
short, skipped or done; ``unblamed``: of the root causes, the new entries they wrote,
not counted ``new``) and ``findings``
(the ``finding`` events themselves, each with the entries it filed, ``ids``, and of each
whether it was new to the corpus and the known upstream bug it matches, ``news`` and
``knowns``; ``new``: any was new. Version 2 had one ``known`` per finding, the first
known bug among its entries, which a reader took for every entry's); ``costs``: the
per-stage cost table (:func:`aliasfuzz.campaign.costs.table` over the journal's
``costs``); ``gpus``: a CUDA campaign's utilization per GPU
(:func:`aliasfuzz.campaign.gpus.merge_rows` over the journal's ``gpus`` events;
``samples`` 0: not measured), empty on CPU.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from aliasfuzz.campaign._repro_words import mismatch, shown
from aliasfuzz.campaign.corpus import load_entry
from aliasfuzz.campaign.driver import INTERNAL, internal_error_row, load_campaign
from aliasfuzz.campaign.gpus import merge_rows
from aliasfuzz.campaign.history import History
from aliasfuzz.campaign.journal import dismissed_kind, entry_fields, finding_entries
from aliasfuzz.campaign.repro import plan, program_text, render_repro, spells_witness, title
from aliasfuzz.errors import InvalidArgument, clip

__all__ = [
    "STATUSES",
    "SUMMARY_VERSION",
    "collect",
    "rejection_reason",
    "root_causes",
    "root_ids",
    "undefined_eager_counts",
]

SUMMARY_VERSION = 3


def _is_finding(verdict: str) -> bool:
    from aliasfuzz.oracle.verdict import Verdict

    try:
        return Verdict(verdict).is_finding
    except ValueError:
        return False


def _rank(verdict: str) -> int:
    from aliasfuzz.oracle.verdict import Verdict

    try:
        return Verdict(verdict).rank
    except ValueError:
        return len(Verdict)


def _confusion(tasks: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """pipeline -> ground truth (safe/unsafe/unknown) -> decision (reinplaced/copied) -> n."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for e in tasks:
        m = out.setdefault(
            e["pipeline"],
            {t: {"reinplaced": 0, "copied": 0} for t in ("safe", "unsafe", "unknown")},
        )
        for d in e["outcome"].get("decisions") or []:
            truth = d.get("truth", "unknown")
            truth = truth if truth in m else "unknown"
            m[truth]["reinplaced" if d.get("reinplaced") else "copied"] += 1
    return out


def rejection_reason(outcome: dict[str, Any]) -> str:
    """A countable reason for an ``invalid-program`` outcome: its check and explanation
    without statement numbers, values or the exception text after the first colon-clause."""
    text = outcome.get("explanation") or ""
    text = re.sub(r"statement \d+: ", "", text)
    head = re.sub(r" \(\w+\)$", "", text.split("; ")[0])  # a trailing "(ErrorType)"
    if head.startswith("eager raises "):
        head = head.split(":")[0]  # the exception type, not its message
    return f"{outcome.get('check') or 'unknown'}: {clip(head, 120)}"


def _by_reason(tasks: list[dict[str, Any]], verdict: str, reason) -> dict[str, dict[str, int]]:
    """pipeline -> ``reason(outcome)`` -> number of runs judged ``verdict``."""
    out: dict[str, Counter] = defaultdict(Counter)
    for e in tasks:
        if e["outcome"]["verdict"] == verdict:
            out[e["pipeline"]][reason(e["outcome"])] += 1
    return {p: dict(c.most_common()) for p, c in sorted(out.items())}


def _undecided_reason(outcome: dict[str, Any]) -> str:
    text = (outcome.get("explanation") or "").split("\n")[0]
    return clip(re.sub(r"\d+", "N", text), 160) or "(no explanation)"


def undecided(tasks: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """pipeline -> reason -> number of ``unknown`` runs (the oracle could not decide), the
    reason being the explanation with numbers (node suffixes, counts) replaced by ``N``."""
    return _by_reason(tasks, "unknown", _undecided_reason)


def refusal_reason(outcome: dict[str, Any]) -> str:
    """The rule of an ``unsupported`` outcome (explanation ``<rule>: <why> (<detail>)``,
    :data:`aliasfuzz.oracle.refusals.REFUSALS`): ``<rule>: <why>``, and ``[<op>]`` when the
    detail names the refused statement's op (``statement 3: view_dtype (view) ...``)."""
    text = outcome.get("explanation") or ""
    head = clip(text.split(" (")[0], 160) or "(no explanation)"
    op = re.search(r"statement \d+: (\S+) \(", text)
    return f"{head} [{op.group(1)}]" if op else head


def _refusals(tasks: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """pipeline -> rule -> number of ``unsupported`` runs (documented refusals)."""
    return _by_reason(tasks, "unsupported", refusal_reason)


def _rejections(tasks: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """pipeline -> reason -> number of ``invalid-program`` runs (programs a pipeline refused)."""
    return _by_reason(tasks, "invalid-program", rejection_reason)


def undefined_eager_counts(tasks: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """pipeline -> counts of the second eager opinions (``oracle/opinions.py``; they review
    findings only): ``reviewed``, the runs a second opinion reviewed, and
    ``reviewed-other-device``, those the other device also did (a GPU host), so that a zero
    below means "looked and agreed", not "never looked"; ``runs``, the runs judged
    ``invalid-program`` / ``undefined-eager``; how many each opinion (``deterministic``,
    ``other-device``) contradicted; and how many only one of them did (``only-other-device``:
    what the CPU-vs-CUDA opinion alone caught). Pipelines no opinion reviewed are left out."""
    out: dict[str, Counter] = defaultdict(Counter)
    for e in tasks:
        o = e["outcome"]
        ran = [op for op in o.get("opinions") or [] if op.get("status") != "unavailable"]
        if not ran:
            continue
        c = out[e["pipeline"]]
        c["reviewed"] += 1
        c["reviewed-other-device"] += any(op["name"] == "other-device" for op in ran)
        if o.get("verdict") != "invalid-program" or o.get("check") != "undefined-eager":
            continue
        bad = {op["name"] for op in ran if op.get("status") == "disagree"}
        c["runs"] += 1
        for name in ("deterministic", "other-device"):
            c[name] += name in bad
            c[f"only-{name}"] += bad == {name}
    keys = ("reviewed", "reviewed-other-device", "runs", "deterministic", "other-device",
            "only-deterministic", "only-other-device")
    return {p: {k: c[k] for k in keys} for p, c in sorted(out.items())}


#: Root-cause status, in report order: new to the corpus and to PyTorch's tracker, new as
#: well but written unblamed because the time budget was spent (its sameness to a known
#: bug or an entry was never decided: fresh user 40's B8), a known upstream bug
#: (``corpus/known.toml``), already in the corpus before this campaign.
STATUSES = ("new", "unblamed", "known", "corpus")


def _entry_fields(corpus: Path, rid: str, campaign: str | None = None) -> dict[str, Any]:
    """What a root cause's corpus entry says (``error`` when it cannot be read, or is gone);
    ``said`` keeps the explanations of campaign ``campaign``'s hits (every hit's when None)."""
    if not (corpus / rid).exists():  # deleted since the campaign wrote it: not unreadable
        return {"error": f"{corpus / rid}: not in the corpus (deleted since the campaign wrote "
                         "it; the journal's task event keeps its unshrunk program)"}
    try:
        entry = load_entry(corpus / rid)
    except InvalidArgument as e:
        return {"error": str(e)}
    m = entry.meta
    root = m.get("root") or {}
    hits = m.get("hits") or []
    p = plan(entry.program, m)
    return {
        "title": title(m, p.pipeline),
        "stage": root.get("stage") or m.get("stage"),
        "stages": m.get("stages") or [],
        "trail": [list(t) for t in m.get("trail") or []],
        "blame_reason": m.get("blame_reason") or "",  # why no stage is named, if none is
        "full": m.get("full"),
        "known_bug": m.get("known"),
        "related": m.get("related") or [],
        "hits_total": dict(Counter(str(h.get("pipeline")) for h in hits)),
        # as a reader reads them: no harness wrapper (fresh user 45's B4)
        "explanation": shown(m.get("explanation", "")),
        "diff": shown(m.get("diff", "")),
        # the verdict and check the explanation and diff above are about (the entry's first
        # sighting)
        "entry_verdict": (m.get("expected") or {}).get("verdict"),
        "entry_check": (m.get("expected") or {}).get("check"),
        # (program, pipeline, verdict, check) -> what the oracle said of that sighting
        "said": {(h.get("program_index"), h.get("pipeline"), h.get("verdict"), h.get("check")):
                 h.get("explanation") or "" for h in hits
                 if campaign is None or h.get("campaign") == campaign},
        "statements": m.get("statements", {}),
        "ops": m.get("ops") or sorted({op.op for op in entry.program.body}),
        # the program and its inputs: the standalone repro.py beside it adds the compile
        # call and the comparison (reports of many findings stay light: 477 KB for 33 with
        # the old 250-line harness inlined)
        "repro": program_text(entry.program, m),
        "repro_lines": len(render_repro(entry.program, m).splitlines()),
        # the corpus the report reads, not always corpus/ (fresh user 40's B9)
        "repro_path": str(corpus / rid / "repro.py"),
        # the compile call as repro.py makes it: dynamic shapes too (fresh user 47's B3: a
        # dynamic-only bug whose row said torch.compile(backend='inductor'))
        "repro_way": p.mode if p.mode != "compile" else (
            f"torch.compile(backend={p.backend!r}"
            + (", dynamic=True" if (p.options or {}).get("dynamic") else "") + ")"),
        # a cost finding's repro compares byte counts, wrapping no pass (fresh user 47's B4)
        "harness": "" if spells_witness(p, m) else p.harness,
        # the repro shows another sighting than the explanation and diff above (fresh user
        # 47's B7: the row said IndexError, its repro raised an AssertionError)
        "repro_sighting": "" if p.own else (
            f"repro.py shows another sighting of this root cause ({p.pipeline}"
            + (f": {mismatch(p.explanation)}" if p.explanation else "")
            + "), the most public one; the explanation and diff above are the entry's own"),
    }


def _other_sightings(
    row: dict[str, Any], evs: list[dict[str, Any]], said: dict[tuple, str]
) -> tuple[list[str], list[dict[str, Any]]]:
    """``(checks, sightings)`` of this campaign's finding events ``evs`` of a root cause
    whose verdict or check is not the entry's own (``row["verdict"]``, ``row["check"]``):
    ``checks`` names each ``check`` (``verdict / check`` where the verdict differs too),
    ``sightings`` the first event of each, ``{i, pipeline, verdict, check, explanation}``,
    its explanation read from the entry's hits (``said``, by program, pipeline, verdict and
    check; "" for a hit that kept none) as a reader reads it (:func:`shown`)."""
    checks: list[str] = []
    sightings: list[dict[str, Any]] = []
    for e in evs:
        verdict, check = e.get("verdict"), e.get("check")
        if not check or (verdict, check) == (row["verdict"], row["check"]):
            continue
        name = str(check) if verdict == row["verdict"] else f"{verdict} / {check}"
        if name in checks:
            continue
        checks.append(name)
        sightings.append({"i": e.get("i"), "pipeline": e.get("pipeline"), "verdict": verdict,
                          "check": check,
                          "explanation": shown(said.get((e.get("i"), e.get("pipeline"), verdict,
                                                         check), ""))})
    order = sorted(range(len(checks)), key=checks.__getitem__)
    return [checks[k] for k in order], [sightings[k] for k in order]


def root_causes(
    corpus: Path, events: list[dict[str, Any]], known_before: set[str],
    campaign: str | None = None,
) -> list[dict[str, Any]]:
    """One row per root cause (corpus entry) the campaign's ``finding`` events name, new
    root causes first (see :data:`STATUSES`), then by verdict severity and id.

    A row: ``id``, ``status``, ``verdict``, ``check`` (the entry's own, which its
    ``explanation`` and ``diff`` show; this campaign's first sighting's for an unreadable
    entry; ``verdict`` likewise), ``campaign_checks`` and ``campaign_sightings`` (this
    campaign's sightings of another check or verdict: :func:`_other_sightings`), ``hits``
    (pipeline -> sightings in this campaign), the entry's ``stage``, ``trail``, ``full`` (this campaign's fast-path
    sightings' when it has any, else the entry's own), ``known_bug``, ``related``,
    ``hits_total`` (pipeline -> sightings over all campaigns), ``title``, ``explanation``,
    ``diff``, ``repro`` (program part of repro.py), ``repro_lines`` and ``repro_path``
    (the entry's repro.py in ``corpus``), and ``budget_spent`` when this campaign wrote the
    entry unblamed, its time budget spent (what was left out); ``error`` instead of the
    entry's fields when it cannot be read. ``campaign``: the id of the campaign whose
    ``events`` these are, whose sightings' explanations are read from the entries' hits."""
    sightings: dict[str, list[dict[str, Any]]] = defaultdict(list)
    issues: dict[str, str] = {}  # entry -> the known bug its events say it is, if any
    for e in events:
        if e.get("t") == "finding" and e.get("id"):
            for x in finding_entries(e, known_before):
                sightings[x.id].append(e)
                if x.known:
                    issues.setdefault(x.id, x.known)
    rows = []
    for rid, evs in sightings.items():
        row = {
            "id": rid,
            "verdict": evs[0].get("verdict"),
            "check": evs[0].get("check"),
            "hits": dict(Counter(str(e.get("pipeline")) for e in evs)),
            "known_issue": issues.get(rid),
            **_entry_fields(corpus, rid, campaign),
        }
        # an entry's own meta says whether its root is a known bug; the events' own
        # per-entry knowns only stand in for an entry that cannot be read (an event of old
        # named the first known root of all it filed: not this one's, necessarily)
        if "error" in row:
            known = {"issue": row["known_issue"]} if row["known_issue"] else None
            # the stage the campaign blamed, from an event that filed this entry first (a
            # deleted entry's row read "unblamed": fresh user 28's B5)
            first = next((e for e in evs if e.get("id") == rid and e.get("stage")), None)
            if first is not None:
                row["stage"], row["stages"] = first["stage"], list(first.get("stages") or [])
        else:
            known = row.get("known_bug")
        row["known_bug"] = known
        row["known_issue"] = known.get("issue") if known else None
        row["status"] = "known" if known else ("corpus" if rid in known_before else "new")
        if rid not in known_before and evs[0].get("budget_spent"):
            # its entry is this sighting as written: say how far it was shrunk, not "after
            # shrinking" (fresh user 40's B8: "6 → 6 after shrinking", never shrunk)
            row["budget_spent"] = evs[0]["budget_spent"]
            if row["status"] == "new":
                row["status"] = "unblamed"
        # this campaign's fast-path sightings say whether full torch.compile showed them (a
        # fresh user read the entry's own n/a against the terminal's full:reproduces)
        said = row.pop("said", {})
        if row.get("entry_check"):
            # the row's verdict and check are the ones its explanation and diff show; this
            # campaign's others are named beside them (fresh user 38's B3: a row read
            # "inputs" above an output-values diff, the entry's first sighting), and what
            # the oracle said of each (fresh user 45's B3: a torchscript miscompile merged
            # into a crash entry showed the crash alone, labelled "miscompile")
            row["verdict"] = row.get("entry_verdict") or row["verdict"]
            row["check"] = row["entry_check"]
            row["campaign_checks"], row["campaign_sightings"] = _other_sightings(row, evs, said)
        fulls = sorted({str(e["full"]) for e in evs if e.get("full")})
        if not fulls and any(e.get("budget_spent") and e.get("pipeline") == "inductor-reinplace"
                             for e in evs):
            # a fast-path sighting written when time was up: it has something to re-run,
            # which "n/a" denied (fresh user 39's B6)
            fulls = ["not re-judged (time budget spent)"]
        if fulls:
            row["full"] = ", ".join(fulls)
        rows.append(row)
    rows.sort(key=lambda r: (STATUSES.index(r["status"]), _rank(r["verdict"]), r["id"]))
    return rows


def internal_errors(events: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"count", "errors"}``: every internal error of aliasfuzz in a campaign's journal
    (tasks judged :data:`~aliasfuzz.campaign.driver.INTERNAL`, shrink steps' ``internal``
    events), each ``{i, pipeline, check, summary, stack}`` in journal order."""
    rows = [
        internal_error_row(e)
        for e in events
        if e["t"] == "internal" or (e["t"] == "task" and e["outcome"]["verdict"] == INTERNAL)
    ]
    return {"count": len(rows), "errors": rows}


def _costs(events, row: dict[str, Any], workers: int, programs: int) -> dict[str, Any]:
    """``{"workers", "wall", "rows"}``: the cost table of the journal's stage seconds."""
    from aliasfuzz.campaign.costs import table, totals

    wall = float(row.get("seconds") or 0.0)
    stages = totals(events)
    rows = table(stages, wall, workers, programs or 0) if stages else []
    return {"workers": workers, "wall": wall, "rows": rows}


def _finding_row(e: dict[str, Any], before: set[str]) -> dict[str, Any]:
    """A ``finding`` event as ``summary.json`` lists it: ``ids`` with each entry's own
    ``news`` and ``knowns`` (:func:`~aliasfuzz.campaign.journal.finding_entries`, which
    reads an event journaled before them too; ``before``: the corpus ids at the start)."""
    row = {k: e.get(k) for k in ("i", "pipeline", "id", "verdict", "check", "stage", "stages",
                                 "full")}
    if e.get("known_first"):  # recorded as found, not shrunk (pool._known_first): its issue
        row["known_first"] = e["known_first"]
    if e.get("budget_spent"):  # written unshrunk and unblamed: the time budget was spent
        row["budget_spent"] = e["budget_spent"]
    return {**row, **entry_fields(finding_entries(e, before))}


def dismissed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The findings campaign ``events`` did not write (the console's ``note:`` lines,
    :func:`aliasfuzz.campaign.cli.dismissed_notes`), in journal order, each ``{i, pipeline,
    kind, why}``: ``kind`` ``flaky`` (the replay did not show it again, or no stage-by-stage
    cut reproduced a worker's death, or neither a cut nor a fresh interpreter's run
    reproduced it) or ``harness-only`` (a fast-path finding full
    ``torch.compile`` does not show, or cannot run here); ``why`` the driver's reason
    (:func:`aliasfuzz.campaign.driver.dismissal`). A report that counted a pipeline's crash
    without them left it unexplained (fresh user 28)."""
    return [{"i": e.get("i"), "pipeline": e.get("pipeline"), "kind": kind,
             "why": str(e["dismissed"])}
            for e in events if (kind := dismissed_kind(e))]


def deduplicated(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The findings campaign ``events`` did not shrink because an earlier finding had their
    coarse key (pipeline, verdict, check, decision kinds, op kinds, ops; taken before shrinking:
    ``driver._Campaign._prekey``), each ``{i, pipeline, like}``: ``like`` the ``[program,
    pipeline]`` of that earlier finding (None in a journal of old). Such a finding files no
    entry and no hit: a different root cause with the same key is not filed (fresh user 30:
    program 77's was decomposition's, its key's first finding remove_noop_ops')."""
    return [{"i": e.get("i"), "pipeline": e.get("pipeline"), "like": e.get("like")}
            for e in events if e.get("t") == "finding" and e.get("duplicate")]


def root_ids(cid: str, *, state: str | Path) -> list[str]:
    """Ids of the corpus entries (root causes) that campaign ``cid``'s ``finding`` events
    name, in first-seen order (the rows :func:`root_causes` reads from the corpus);
    :class:`InvalidArgument` if there is no such campaign."""
    d = Path(state) / "runs" / cid
    if not (d / "options.json").exists():
        raise InvalidArgument(f"no campaign {cid!r} under {state}")
    ids: dict[str, None] = {}
    for e in load_campaign(d)[2]:
        if e.get("t") == "finding" and e.get("id"):
            ids.update(dict.fromkeys(e.get("ids") or [e["id"]]))
    return list(ids)


def _mutants(tasks: list[dict[str, Any]], pipelines: tuple[str, ...]) -> Counter:
    """Source id -> the number of programs mutated from it (``--mutate``) that every
    pipeline has judged: the programs a campaign counts, the journal's task events naming
    ``mutated_from`` (:class:`aliasfuzz.campaign.sources.Programs`)."""
    judged = _judged_by(tasks)
    source = {e["i"]: e["mutated_from"] for e in tasks if e.get("mutated_from")}
    return Counter(s for i, s in source.items() if judged[i] >= set(pipelines))


def _judged_by(tasks: list[dict[str, Any]]) -> dict[int, set[str]]:
    """Program index -> the pipelines whose task events ``tasks`` hold for it."""
    judged: dict[int, set[str]] = defaultdict(set)
    for e in tasks:
        judged[e["i"]].add(e["pipeline"])
    return judged


def _partial(tasks: list[dict[str, Any]], pipelines: tuple[str, ...]) -> int:
    """How many programs of ``tasks`` some of ``pipelines`` judged, but not all."""
    return sum(1 for ps in _judged_by(tasks).values() if not set(pipelines) <= ps)


def collect(cid: str, *, state: str | Path, corpus: str | Path) -> dict[str, Any]:
    """The report data of campaign ``cid``; :class:`InvalidArgument` if it does not exist."""
    d = Path(state) / "runs" / cid
    if not (d / "options.json").exists():
        raise InvalidArgument(f"no campaign {cid!r} under {state}")
    opts, start, events = load_campaign(d)
    tasks = [e for e in events if e["t"] == "task"]
    history = History(Path(state) / "history.sqlite")
    row = history.campaign(cid) or {}
    verdicts: dict[str, Counter] = defaultdict(Counter)
    seconds: dict[str, list[float]] = defaultdict(list)
    coverage: dict[str, Counter] = defaultdict(Counter)
    programs: dict[int, list[str]] = {}
    for e in tasks:
        v = e["outcome"]["verdict"]
        verdicts[e["pipeline"]][v] += 1
        seconds[e["pipeline"]].append(float(e["outcome"].get("seconds") or 0.0))
        programs[e["i"]] = e.get("op_kinds", [])
        for k in e.get("op_kinds", []):
            coverage[k][v] += 1
    kinds = Counter(k for ks in programs.values() for k in ks)
    mutated_from = _mutants(tasks, opts.pipelines)
    before = set(start.get("known") or [])  # the corpus ids when the campaign started
    findings = [_finding_row(e, before) for e in events if e["t"] == "finding" and e.get("id")]
    causes = root_causes(Path(corpus), events, before, cid)
    raw = sum(1 for e in tasks if _is_finding(e["outcome"]["verdict"]))
    not_written = dismissed(events)
    not_shrunk = deduplicated(events)
    return {
        "summary_version": SUMMARY_VERSION,
        "campaign": {
            "id": cid,
            "seed": opts.seed,
            "device": opts.device,
            "pipelines": list(opts.pipelines),
            "budget": row.get("budget"),
            "status": row.get("status"),
            "started": start["started"],
            "seconds": row.get("seconds"),
            "programs": row.get("programs", len(programs)),
            # of the programs, mutants of a corpus program or seed (--mutate), and per source
            "mutants": sum(mutated_from.values()),
            "mutated_from": dict(sorted(mutated_from.items())),
            # programs judged by some pipelines only (the budget ran out while they ran):
            # in the verdict counts, not in "programs" (driver.CampaignResult.partial)
            "partial": _partial(tasks, opts.pipelines),
            "tasks": len(tasks),
            "throughput": row.get("throughput"),
            "versions": start["versions"],
        },
        "verdicts": {p: dict(c) for p, c in sorted(verdicts.items())},
        "seconds_per_task": {p: sorted(s) for p, s in sorted(seconds.items())},
        "confusion": _confusion(tasks),
        "rejections": _rejections(tasks),
        "unsupported": _refusals(tasks),
        "undefined_eager": undefined_eager_counts(tasks),
        "unknown": undecided(tasks),
        "coverage": {
            "programs_with_kind": dict(sorted(kinds.items())),
            "verdicts_by_kind": {k: dict(c) for k, c in sorted(coverage.items())},
        },
        "findings": findings,
        "dismissed": not_written,
        "deduplicated": not_shrunk,
        "root_causes": causes,
        "counts": {
            "raw_findings": raw,
            # every finding written (fresh user 53's B4: "shrunk_findings" counted them all,
            # the known-first and budget-spent ones too, where the report said "13 shrunk")
            "written_findings": len(findings),
            "shrunk_findings": sum(1 for f in findings
                                   if not f.get("known_first") and not f.get("budget_spent")),
            # of them, recorded as found as a known bug's sighting (driver.known_first)
            "known_first": sum(1 for f in findings if f.get("known_first")),
            # of them, written neither shrunk nor blamed: the campaign's time was up
            # (pool: note["budget_spent"]; fresh user 39's B5 read "5 shrunk and blamed")
            "budget_spent": sum(1 for f in findings if f.get("budget_spent")),
            "dismissed": len(not_written),
            "deduplicated": len(not_shrunk),
            "root_causes": len(causes),
            **{status: sum(1 for r in causes if r["status"] == status) for status in STATUSES},
            # entries this campaign wrote, a known bug's first one too ("new" is new and not
            # known upstream: fresh user 38's B2 read "0 new" beside an untracked folder)
            "written": sum(1 for r in causes if r["id"] not in before),
        },
        "internal_errors": internal_errors(events),
        "costs": _costs(events, row, opts.workers, row.get("programs", len(programs))),
        # a CUDA campaign's utilization per GPU, every run of it merged; empty on CPU
        "gpus": merge_rows(e["gpus"] for e in events if e["t"] == "gpus"),
        "history": [
            {
                "id": c["id"],
                "started": c["started"],
                "programs": c["programs"],
                "throughput": c["throughput"],
                "status": c["status"],
                "findings": len(c["findings"]),
                "new_findings": sum(f["new"] for f in c["findings"]),
                "internal_errors": c.get("internal_errors") or 0,
            }
            for c in history.campaigns()
        ],
    }
