"""Known upstream bugs: root causes matched to PyTorch issues (``corpus/known.toml``).

A campaign keeps finding bugs that PyTorch already tracks; an engineer triaging a run
wants those counted apart from the new ones, with the issue to follow. ``known.toml``
holds one ``[[bug]]`` table per tracked root cause::

    [[bug]]
    issue = "pytorch/pytorch#195422"
    title = "F.dropout(training=False) is a clone under AOTAutograd"
    stage = "decomposition"          # required: the blamed stage (aliasfuzz.oracle.blame)
    verdict = "miscompile"           # optional
    ops = ["dropout_eval"]           # optional: registry ops all present in the program
    evidence = ["triton"]            # optional: each a prefix of some root evidence item
    absent = ["aliased-inputs"]      # optional: no root evidence item starts with these
    pipelines = ["fx-reinplace"]     # optional: the finding's pipeline is one of these
    related = false                  # optional: true marks a bug of the same family only
    why = "eager changes x, compiled code leaves it"  # optional: the observable that differs
                                     # and why PyTorch promises it (printed by repro and draft)
    checks = ["inputs"]              # optional: the observables ``why`` describes (values,
                                     # inputs, aliasing, requires_grad); a root cause of
                                     # another check is related, not this bug, and a
                                     # sighting whose difference is another is shown
                                     # without the why
    control = { functorch_config = { view_replay_for_aliased_outputs = false } }
                                     # optional: pipeline options (PipelineOptions fields)
                                     # under which the bug is gone: the issue's workaround
    torch = "<2.13"                  # optional: PEP 440 specifiers the running torch's
                                     # release must meet (a bug fixed upstream, still in an
                                     # older supported release; local tags like +cpu ignored)
    explanation = "requires_grad eager False"  # optional: a regular expression the
                                     # sighting's explanation must contain (re.search): the
                                     # symptom where the root key cannot tell it (TorchScript's
                                     # executors, whose root cause has no op-level evidence)
    pattern = "custom-op-reads-clone-of-written"  # optional: a program shape of
                                     # PATTERNS the finding's program must have: the issue's
                                     # own construction where ops and decisions cannot tell it

A finding matches a bug when every field given matches (:func:`match`). ``related``
entries are shown with the finding but do not make it known. A bug with a ``control`` is
matched by execution as well: the campaign runs the shrunk program on the finding's
pipeline again with the control's options (:func:`aliasfuzz.campaign.pool.blame_in`), and
the finding is that bug only when the issue's workaround removes it
(:func:`control_removes`); otherwise the bug is shown as related. Fields alone could not tell the
crashes of PyTorch #198095 (an output view of an aliased input replayed onto the synthetic
base, gone with ``view_replay_for_aliased_outputs=False``) from other functionalization
crashes of programs with aliased inputs (tenth and eleventh audits: f50f475f8f). Loading parses TOML only
(:mod:`tomllib`), never code; a malformed file is a one-line :class:`InvalidArgument`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = ["SAME_OPTIONS", "KnownBug", "check_controls", "control_candidates", "control_removes",
           "known_first_candidates", "load_known", "match", "witness_rules"]

FILENAME = "known.toml"

#: The checkout's own list, read when a corpus has none (a fresh ``--corpus DIR``).
DEFAULT = Path(__file__).resolve().parents[2] / "corpus" / FILENAME

_FIELDS = {"issue", "title", "stage", "verdict", "ops", "evidence", "absent", "pipelines", "related",
           "why", "checks", "control", "torch", "explanation", "pattern"}

#: What a ``control`` may set: :class:`aliasfuzz.passes.pipelines.PipelineOptions` fields
#: (listed here so that loading the table needs no torch; a test keeps them equal).
_BOOL_FIELDS = {"dynamic", "auto_functionalized_v2", "reinplace_off_declines"}
_TABLE_FIELDS = {"inductor_config", "torchscript", "functorch_config", "dynamo_config"}
_OPTION_FIELDS = _BOOL_FIELDS | _TABLE_FIELDS

#: A ``controls`` verdict (the blame's) for a bug whose control would change none of the
#: finding's pipeline options: not run; the finding is not that bug (:func:`match`).
SAME_OPTIONS = "same-options"

#: What a ``checks`` item may name (the observables of ``_repro_words.observable``).
OBSERVABLES = ("values", "inputs", "aliasing", "requires_grad", "grads")


@dataclass(frozen=True)
class KnownBug:
    """One ``[[bug]]`` table of ``known.toml`` (see the module docstring)."""

    issue: str
    title: str
    stage: str
    verdict: str | None = None
    ops: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    pipelines: tuple[str, ...] = ()
    related: bool = False
    why: str = ""
    checks: tuple[str, ...] = ()
    #: PipelineOptions fields (sorted pairs; a config table's value is a dict)
    control: tuple[tuple[str, Any], ...] = field(default=(), hash=False)
    #: PEP 440 specifiers of the torch releases that have the bug ("" any)
    torch: str = ""
    #: a regular expression the sighting's explanation must contain ("" any)
    explanation: str = ""
    #: a name of :data:`PATTERNS` the finding's program must have ("" any)
    pattern: str = ""

    def control_options(self, options: dict[str, Any] | None) -> dict[str, Any]:
        """The finding's pipeline options (a JSON dict of
        :class:`~aliasfuzz.passes.pipelines.PipelineOptions` fields) with this bug's control
        on top; config tables (``inductor_config``, ``functorch_config``, ``dynamo_config``)
        are merged."""
        out = dict(options or {})
        for key, value in self.control:
            out[key] = {**out.get(key, {}), **value} if isinstance(value, dict) else value
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``known`` / ``related`` items of an entry's ``meta.json`` (``why`` and
        ``checks`` when set)."""
        out: dict[str, Any] = {"issue": self.issue, "title": self.title, "related": self.related}
        if self.why:
            out["why"] = self.why
        if self.checks:
            out["checks"] = list(self.checks)
        return out


def _strings(where: str, key: str, v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise InvalidArgument(f"{where}: {key} must be a list of strings")
    return tuple(v)


def _is_stage(name: str, verdict: Any = None) -> bool:
    """Whether ``name`` is a stage :func:`aliasfuzz.oracle.blame.blame` can name: a fixed
    stage of a pipeline, ``aot``, ``aot-runtime``, ``reinplace``, ``aten-trace``, the vectorized
    C++ codegen, or a
    ``joint:``/``post-grad:`` pass; for a ``missed-reinplace`` row also
    ``unblamed:<pipeline>``, the root stage of a cost finding of check ``witness``, which no
    cut names by design (:data:`aliasfuzz.oracle.blame.COST_NOT_CUT`; its evidence
    ``witness:<rule>`` says which spelling)."""
    from aliasfuzz.oracle.blame import ATEN_TRACE, CPP_VECTORIZED, DONATED_BUFFER
    from aliasfuzz.passes.stages import PIPELINE_STAGES

    fixed = {s for stages in PIPELINE_STAGES.values() for s in stages if not s.startswith("<")}
    if verdict == "missed-reinplace" and name.partition(":")[0] == "unblamed":
        return name.partition(":")[2] in PIPELINE_STAGES
    return name in fixed | {"aot", "aot-runtime", "reinplace", ATEN_TRACE, CPP_VECTORIZED,
                            DONATED_BUFFER} or (
        name.partition(":")[0] in ("joint", "post-grad") and bool(name.partition(":")[2])
    )


def _stage_error(stage: str, verdict: Any) -> str:
    """Why ``stage`` is refused: an ``unblamed:<pipeline>`` row without the one verdict it
    may have, else the forms a stage takes."""
    from aliasfuzz.passes.stages import PIPELINE_STAGES

    head, _, pipeline = stage.partition(":")
    if head == "unblamed" and pipeline in PIPELINE_STAGES:
        return (f"stage {stage!r} needs verdict = \"missed-reinplace\" (the root stage of a "
                f"cost finding of check witness), not {verdict!r}" if verdict is not None else
                f"stage {stage!r} needs verdict = \"missed-reinplace\" (the root stage of a "
                "cost finding of check witness)")
    return (f"unknown stage {stage!r} (a stage of aliasfuzz.passes.stages, "
            "joint:/post-grad:<pass>, aot, aot-runtime, or unblamed:<pipeline> with "
            "verdict = \"missed-reinplace\")")


def witness_rules() -> list[str]:
    """The rule names of :data:`aliasfuzz.oracle.witness.RULES`, in order, each once: what
    an evidence item ``witness:<rule>`` may name."""
    from aliasfuzz.oracle.witness import RULES

    return list(dict.fromkeys(name for name, _ in RULES))


def _unknown_witness_rules(evidence: tuple[str, ...]) -> list[str]:
    """The ``witness:<rule>`` items of ``evidence`` whose rule is not a witness rule."""
    rules = None
    bad = []
    for item in evidence:
        if item.startswith("witness:"):
            rules = rules if rules is not None else set(witness_rules())
            if item.partition(":")[2] not in rules:
                bad.append(item)
    return bad


def _custom_op_reads_clone_of_written(program: Any) -> bool:
    """Whether a custom op (``fz.*``) of ``program`` takes as one argument ``clone(a)`` and
    as another ``a`` itself, which it writes: ``c = x.clone(); op(c, x)``, PyTorch #198031's
    own program (``remove_noop_ops`` drops the clone, the op then reads what it writes).
    Audit 53 found a second sighting filed under the issue by its ops and decisions alone
    (7ab134e145, program 308: ``clone(x0)``, ``add_one_(x0)``, then an ``index_add`` written
    through a full-range ``slice_scatter`` of ``x0``), where no op reads a clone."""
    from aliasfuzz.fuzz.ops import REGISTRY, OpKind

    clones: dict[str, str] = {}
    for op in program.body:
        if op.op == "clone" and len(op.args) == 1 and len(op.out) == 1:
            clones[op.out[0]] = op.args[0]
            continue
        d = REGISTRY.get(op.op)
        if d is None or d.kind is not OpKind.CUSTOM:
            continue
        written = {op.args[i] for i in d.mutated_indices(len(op.args)) if i < len(op.args)}
        if any(clones.get(a) in written for a in op.args):
            return True
    return False


#: Program shapes a bug's ``pattern`` may name: name -> predicate over an IR program
#: (:class:`aliasfuzz.fuzz.ir.Program`).
PATTERNS = {"custom-op-reads-clone-of-written": _custom_op_reads_clone_of_written}


def _bug(where: str, t: Any) -> KnownBug:
    if not isinstance(t, dict):
        raise InvalidArgument(f"{where}: not a table")
    unknown = sorted(set(t) - _FIELDS)
    if unknown:
        raise InvalidArgument(f"{where}: unknown key(s) {unknown}")
    for key in ("issue", "title", "stage"):
        if not isinstance(t.get(key), str) or not t[key]:
            raise InvalidArgument(f"{where}: {key} must be a non-empty string")
    if "verdict" in t and not isinstance(t["verdict"], str):
        raise InvalidArgument(f"{where}: verdict must be a string")
    if not _is_stage(t["stage"], t.get("verdict")):
        raise InvalidArgument(f"{where}: {_stage_error(t['stage'], t.get('verdict'))}")
    if "verdict" in t:
        from aliasfuzz.oracle.verdict import Verdict

        try:
            Verdict(t["verdict"])
        except ValueError:
            raise InvalidArgument(f"{where}: unknown verdict {t['verdict']!r}") from None
    if not isinstance(t.get("related", False), bool):
        raise InvalidArgument(f"{where}: related must be true or false")
    if "why" in t and (not isinstance(t["why"], str) or not t["why"].strip()):
        raise InvalidArgument(f"{where}: why must be a non-empty string")
    lists = {k: _strings(where, k, t[k]) for k in ("ops", "evidence", "absent", "pipelines", "checks")
             if k in t}
    for key in ("evidence", "absent"):
        bad = _unknown_witness_rules(lists.get(key, ()))
        if bad:  # such a row never matches (or never excludes) what it means to
            raise InvalidArgument(f"{where}: unknown witness rule(s) {bad} in {key} (known "
                                  f"rules: {', '.join(f'witness:{r}' for r in witness_rules())})")
    bad = sorted(set(lists.get("checks", ())) - set(OBSERVABLES))
    if bad:
        raise InvalidArgument(f"{where}: unknown check(s) {bad} (one of {', '.join(OBSERVABLES)})")
    control = t.get("control", {})
    if not isinstance(control, dict) or (control and t.get("related", False)):
        raise InvalidArgument(f"{where}: control must be a table of pipeline options, on a bug "
                              "that is not related = true")
    for key, value in control.items():  # the types PipelineOptions takes (a typo'd value
        # made the control fail in the worker and its bug's sightings new: fresh user 36's B1)
        if key in _BOOL_FIELDS and not isinstance(value, bool):
            raise InvalidArgument(f"{where}: control: {key} must be true or false, not {value!r}")
        if key in _TABLE_FIELDS and not isinstance(value, dict):
            raise InvalidArgument(f"{where}: control: {key} must be a table, not {value!r}")
    unknown = sorted(set(control) - _OPTION_FIELDS)
    if unknown:
        raise InvalidArgument(f"{where}: control: unknown pipeline option(s) {unknown}")
    spec = t.get("torch", "")
    if not isinstance(spec, str) or (spec and _specifiers(spec) is None):
        raise InvalidArgument(f"{where}: torch must be PEP 440 version specifiers such as "
                              f"'<2.13' or '>=2.11,<2.12', not {spec!r}")
    pattern = t.get("explanation", "")
    try:
        if not isinstance(pattern, str):
            raise re.error("not a string")
        re.compile(pattern)
    except re.error as e:
        raise InvalidArgument(f"{where}: explanation must be a regular expression ({e})") from None
    shape = t.get("pattern", "")
    if shape != "" and shape not in PATTERNS:
        raise InvalidArgument(f"{where}: unknown pattern {shape!r} (one of {', '.join(PATTERNS)})")
    return KnownBug(t["issue"], t["title"], t["stage"], t.get("verdict"), pattern=shape,
                    related=t.get("related", False), why=" ".join(t.get("why", "").split()),
                    control=tuple(sorted(control.items())), torch=spec, explanation=pattern,
                    **lists)


def _specifiers(spec: str) -> Any:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None


def torch_release() -> str:
    """The running torch's release (``2.11.0+cu130`` -> ``2.11.0``)."""
    import torch
    from packaging.version import Version

    return Version(torch.__version__).base_version


def _torch_matches(spec: str) -> bool:
    return not spec or _specifiers(spec).contains(torch_release(), prereleases=True)


def load_known(corpus: str | Path) -> list[KnownBug]:
    """The bugs of ``<corpus>/known.toml``, or of the checkout's ``corpus/known.toml``
    (:data:`DEFAULT`) when the corpus has none, so that a campaign into a fresh corpus still
    counts known bugs apart; empty when neither exists (a non-editable install).

    Raises :class:`InvalidArgument` (one line naming the file) when it is not valid TOML,
    a table is malformed, or it exists and cannot be read (a directory, no permission).
    """
    path = Path(corpus) / FILENAME
    if not path.exists():
        path = DEFAULT
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path}: not valid TOML ({e})") from None
    except OSError as e:
        # a directory or an unreadable file: read as "no known bugs", a campaign filed a
        # known bug as new and exited 1 (fresh user 52's B1)
        raise InvalidArgument(f"{path}: cannot be read ({e.strerror or e})") from None
    extra = sorted(set(data) - {"bug"})
    if extra:  # e.g. [[bugs]]: silently no known bug at all
        raise InvalidArgument(f"{path}: unknown table(s) {extra} (known bugs are [[bug]])")
    bugs = data.get("bug", [])
    if not isinstance(bugs, list):
        raise InvalidArgument(f"{path}: 'bug' must be an array of tables ([[bug]])")
    return [_bug(f"{path} bug {k + 1}", t) for k, t in enumerate(bugs)]


def _fields_match(b: KnownBug, root: dict[str, Any], ops: set[str], pipelines: set[str]) -> bool:
    """Whether every field ``b`` gives matches the root cause (its control aside)."""
    evidence = list(root.get("evidence") or [])
    return (
        b.stage == root.get("stage")
        and _uncut_fields_match(b, root.get("verdict"), ops, evidence, pipelines)
        and not any(e.startswith(p) for p in b.absent for e in evidence)
    )


def _observed(b: KnownBug, root: dict[str, Any]) -> bool:
    """Whether root cause ``root`` shows what bug ``b``'s ``why`` describes: its ``check``
    is one of ``b.checks``, values and inputs counting as one (a row without ``checks``, or
    a check that is no observable, a crash's or a cost claim's, is not asked). Audit 47 (0e1bb94e80): an output that lost
    its aliasing after ``set_`` matched #133512's ``contiguous`` row by its stage, verdict,
    op and evidence, a strides bug whose symptom is values and inputs."""
    check = root.get("check")
    if not b.checks or check not in OBSERVABLES or check in b.checks:
        return True
    # one wrong element shows in an output or in an input after the call, whichever the
    # program returns: values and inputs are one symptom
    return check in _ELEMENTS and bool(set(b.checks) & set(_ELEMENTS))


#: The checks of a wrong element (:func:`_observed`).
_ELEMENTS = ("values", "inputs")


def _uncut_fields_match(b: KnownBug, verdict: Any, ops: set[str], evidence: list[str],
                        pipelines: set[str]) -> bool:
    """The fields of ``b`` a finding can be matched on before the cut: ``verdict``, ``ops``,
    ``evidence`` prefixes, ``pipelines`` and ``torch`` (:func:`_fields_match` adds ``stage``
    and ``absent``)."""
    return (
        (b.verdict is None or b.verdict == verdict)
        and set(b.ops) <= ops
        and all(any(e.startswith(p) for e in evidence) for p in b.evidence)
        and (not b.pipelines or bool(set(b.pipelines) & pipelines))
        and _torch_matches(b.torch)
    )


#: A control's verdicts that show a crash gone: the compiled call ran and departed from eager
#: nowhere (``unknown``: only a claim about a kept copy was left undecided;
#: ``missed-reinplace``: a copy kept, values right).
_CRASH_GONE = ("ok", "unknown", "missed-reinplace")


def _failed_at(outcome: dict[str, Any]) -> int | None:
    """The index in ``passes.execution.STAGES`` of the clock stage ``outcome``'s compiled
    call failed at: its ``failed_at`` field (``campaign/_judge.py``), or, for an outcome
    journaled before that field, the stage the oracle's crash explanation names
    (``compiled raises _Failed: <stage>: <error>``, ``oracle/judge.py``); None when neither
    says (then no other error removes a crash: the finding is filed as before, new, the bug
    related)."""
    from aliasfuzz.passes.execution import STAGES  # imports torch: only where controls ran

    stage = outcome.get("failed_at")
    if stage is None:
        m = re.search(rf"_Failed: ({'|'.join(STAGES)}): ", str(outcome.get("explanation") or ""))
        stage = m.group(1) if m else None
    return STAGES.index(stage) if stage in STAGES else None


def control_removes(
    finding_verdict: str | None, control_verdict: str | None,
    finding: dict[str, Any] | None = None, control: dict[str, Any] | None = None,
) -> bool:
    """Whether a known bug's control (its workaround, run on the finding's program and
    pipeline) gave ``control_verdict`` where the finding's verdict removes the finding: ``ok``
    always; for a crash or timeout also ``unknown`` and ``missed-reinplace`` (the fresh user
    of the fourteenth session: #198095's control gave ``ok`` on ``aot_eager`` and ``unknown``
    on Inductor, a reinplace candidate left undecided, and the same program was filed as a
    new bug beside the known one). Given both outcomes (``finding``, ``control``: verdict,
    check, explanation), a crash is removed too when the compiled call, under the
    workaround, returned (``miscompile``: another bug's wrong values) or raised another error
    (:func:`aliasfuzz.campaign.rootclass.error_class`) at a later stage than the finding's,
    so past the point where it raised: audit 36 found #122773's crash (Dynamo, ``trace``)
    filed new on the fast path, whose static compile raised its own overlap error at
    ``run``, and filed known on ``aot_eager``, whose static compile ran. Another error at the
    same or an earlier stage could hide the finding's, so it never removes it; nor do None
    (no control ran), ``internal-error`` and the rest."""
    if control_verdict == "ok":
        return True
    if finding_verdict not in ("crash", "timeout"):
        return False
    if control_verdict in _CRASH_GONE:
        return True
    if finding_verdict != "crash" or finding is None or control is None:
        return False
    if control_verdict == "miscompile":  # the compiled call returned: it raised nowhere
        return True
    if control_verdict != "crash":
        return False
    from aliasfuzz.campaign.rootclass import error_class

    at, got = _failed_at(finding), _failed_at(control)
    was = error_class(str(finding.get("explanation") or ""))
    now = error_class(str(control.get("explanation") or ""))
    return at is not None and got is not None and got > at and None not in (was, now) and was != now


def match(
    bugs: list[KnownBug], root: dict[str, Any], ops: set[str], pipelines: set[str],
    controls: dict[str, str] | None = None, removed: dict[str, bool] | None = None,
    explanation: str = "", program: Any = None,
) -> tuple[KnownBug | None, list[KnownBug]]:
    """The known bug a root cause is (or None), and the related ones it resembles.

    ``root`` is a key of :func:`aliasfuzz.campaign.corpus.roots`, ``ops`` the registry op
    names of the entry's program, ``pipelines`` the pipelines that hit it, ``controls`` the
    verdicts of the bugs' controls run on the finding (issue -> verdict, the blame's
    ``controls``): a bug with a control matches only when its control removed the finding
    (:func:`control_removes`; ``removed``, the blame's ``controls_removed``, says it per
    issue where the outcomes were at hand, else the verdicts decide), and is related
    otherwise; so is a bug whose ``checks`` do not hold the root's check (:func:`_observed`);
    a control recorded as :data:`SAME_OPTIONS` (the finding's options already were the
    workaround's) makes the bug neither. ``explanation`` is the sighting's (the oracle's
    words), which a bug's ``explanation`` pattern must be found in; ``program`` the entry's
    (:class:`aliasfuzz.fuzz.ir.Program`), of which a bug's ``pattern`` must hold (None: a
    bug with a ``pattern`` does not match).
    """
    hit, related = None, []
    for b in bugs:
        if b.control and (controls or {}).get(b.issue) == SAME_OPTIONS:
            continue  # the finding ran under the issue's workaround: another bug
        ok = _fields_match(b, root, ops, pipelines) and _symptom_matches(b, explanation, program)
        if ok and not _observed(b, root):
            related.append(b)  # the same fields, another symptom than the issue's
            continue
        gone = (removed[b.issue] if removed and b.issue in removed
                else control_removes(root.get("verdict"), (controls or {}).get(b.issue)))
        if ok and b.control and not gone:
            related.append(b)  # the same fields, but the issue's workaround does not remove it
        elif ok and b.related:
            related.append(b)
        elif ok and hit is None:
            hit = b
        elif ok:
            # a second issue whose row matches too: cited beside the first (audit 47,
            # 18200bcea1: scatter_add.out under dynamic shapes is #194103's op, and fails in
            # #122773's frame, get_overlap_status; the report named only the first)
            related.append(b)
    # an issue is named once: the known one is not also related, and two family rows of
    # one issue are one related item (audit 26: 359e61eada named #195285 known and related,
    # under two titles)
    named = {hit.issue} if hit is not None else set()
    once = []
    for b in related:
        if b.issue not in named:
            named.add(b.issue)
            once.append(b)
    return hit, once


def _symptom_matches(b: KnownBug, explanation: str, program: Any) -> bool:
    """Whether a finding's ``explanation`` holds bug ``b``'s ``explanation`` pattern and its
    ``program`` has ``b``'s ``pattern`` (each where ``b`` gives one; a ``pattern`` without
    a program does not hold)."""
    return (not b.explanation or re.search(b.explanation, explanation) is not None) and (
        not b.pattern or (program is not None and PATTERNS[b.pattern](program)))


def control_candidates(
    bugs: list[KnownBug], roots: list[dict[str, Any]], ops: set[str], pipeline: str,
    explanation: str = "", program: Any = None,
) -> list[KnownBug]:
    """The bugs with a ``control`` whose fields match one of ``roots`` (the finding's
    root-cause keys) on ``pipeline``, and whose ``explanation`` and ``pattern`` the finding
    (its ``explanation``, its ``program``) holds: the controls the campaign runs for this
    finding. A control of a bug :func:`match` could never name would be a compile for
    nothing (issue 16)."""
    return [b for b in bugs
            if b.control and _symptom_matches(b, explanation, program)
            and any(_fields_match(b, root, ops, {pipeline}) for root in roots)]


def known_first_candidates(
    bugs: list[KnownBug], verdict: str, pipeline: str, ops: set[str], features: list[str],
    explanation: str = "", program: Any = None,
) -> list[KnownBug]:
    """The bugs with a ``control`` that an unshrunk, unblamed finding could be (issue 16's
    known-first: :meth:`aliasfuzz.campaign.pool.Pool._shrink` runs their controls before
    shrinking). Every field that can be read before the cut must match: ``verdict``,
    ``pipelines``, ``ops`` (registry op names of the program, ``ops``) and the ``evidence``
    prefixes among the program's features (``features``: op kinds and input features,
    :func:`aliasfuzz.campaign.corpus.roots`' evidence for a stage other than ``reinplace``;
    shrinking only removes features, so a prefix missing here is missing after it too).
    ``stage`` and ``absent`` wait for the cut. A bug blamed on ``reinplace`` (its evidence
    is the pass's decisions, not features) and a ``related`` row are never candidates, nor
    is a bug whose ``explanation`` or ``pattern`` the finding (``explanation``, ``program``)
    does not hold (:func:`match` would not name it)."""
    return [b for b in bugs
            if b.control and not b.related and b.stage != "reinplace"
            and _symptom_matches(b, explanation, program)
            and _uncut_fields_match(b, verdict, ops, features, {pipeline})]


def _flat(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A config table's ``(dotted key, value)`` pairs: TOML reads ``cpp.simdlen = 1`` as
    ``{"cpp": {"simdlen": 1}}``."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            out += _flat(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def check_controls(bugs: list[KnownBug]) -> None:
    """Raise :class:`InvalidArgument` (one line) unless every ``control`` names options that
    exist, with values of their type: ``functorch_config`` keys of
    ``torch._functorch.config``, ``dynamo_config`` keys of ``torch._dynamo.config``, ``inductor_config`` keys (dotted, ``cpp.simdlen``) of
    ``torch._inductor.config``, ``torchscript`` keys of
    :class:`~aliasfuzz.passes.torchscript.TorchScriptOptions`. Imports torch (loading the
    table does not), so ``run`` calls it once, before any work: a misspelled workaround
    option made every control run fail inside the worker, and #198095's crash was filed as a
    new root cause (fresh user 36's B1)."""
    import dataclasses

    import torch._dynamo.config as dynamo_config
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    from aliasfuzz.passes.torchscript import TorchScriptOptions

    modules = {"functorch_config": functorch_config, "inductor_config": inductor_config,
               "dynamo_config": dynamo_config}
    script = {f.name for f in dataclasses.fields(TorchScriptOptions)}
    for b in bugs:
        for field_name, table in b.control:
            if field_name == "torchscript":
                bad = sorted(set(table) - script)
                if bad:
                    raise InvalidArgument(f"{FILENAME}: {b.issue}: control: torchscript has no "
                                          f"option {bad[0]!r}")
            if field_name not in modules:
                continue
            for key, value in _flat(table):
                obj: Any = modules[field_name]
                try:
                    for part in key.split("."):
                        obj = getattr(obj, part)
                except AttributeError:
                    raise InvalidArgument(
                        f"{FILENAME}: {b.issue}: control: {field_name} has no option {key!r} "
                        f"(torch {torch_release()})") from None
                if isinstance(obj, bool) != isinstance(value, bool) or (
                        isinstance(obj, int | float) and not isinstance(value, int | float)):
                    raise InvalidArgument(f"{FILENAME}: {b.issue}: control: {field_name}.{key} "
                                          f"must be like {obj!r}, not {value!r}")
