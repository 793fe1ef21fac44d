"""The corpus: one folder per finding, written atomically, read as JSON only.

Layout of ``corpus/<id>/`` (see ``corpus/README.md``): ``program.json`` (the minimized
program, :meth:`Program.dumps`), ``meta.json`` (signature, expected verdict, versions,
seed, pipeline options, explanation, eager/compiled diff) and ``repro.py`` (standalone,
needs only torch). An entry is built in ``corpus/.tmp-<id>-<pid>/``, every file and the
folder fsync'ed, then renamed into place: a reader sees a whole entry or none. Loading an
entry never executes code.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aliasfuzz.errors import InvalidArgument, clip
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops.core import NoEagerMeaning

__all__ = [
    "CorpusEntry",
    "clean_temp",
    "compact_hit",
    "entry_id",
    "hit_program",
    "load_entry",
    "Recorded",
    "add_hit",
    "list_entries",
    "record",
    "roots",
    "signature",
    "versions",
    "write_entry",
]

META_VERSION = 2

def signature(program: Program, outcome: dict[str, Any], pipeline: str) -> dict[str, Any]:
    """The superficial key of a finding before it is shrunk and blamed: pipeline, verdict,
    failed check, decision kinds, op kinds of ``program``. The driver shrinks one finding
    per key and campaign (a cheap first filter); entries are keyed by :func:`roots`."""
    from aliasfuzz.fuzz.ops import lookup

    return {
        "pipeline": pipeline,
        "verdict": outcome["verdict"],
        "check": outcome.get("check"),
        "decision_kinds": sorted(set(outcome.get("decision_kinds") or [])),
        "op_kinds": sorted({lookup(op.op).kind.value for op in program.body}),
    }


def _features(program: Program) -> list[str]:
    from aliasfuzz.campaign.reduce import needed_features

    f = needed_features(program)
    return sorted(f["op_kinds"]) + sorted(f["input_features"])


def _decision_evidence(outcome: dict[str, Any], verdict: str) -> list[str]:
    """The reinplace pass's decisions behind a finding blamed on it: the candidates it
    reinplaced that the ground truth calls unsafe (``kind:rule N``), else every candidate
    it reinplaced (``kind:reinplaced``); for a claim, the claimed decisions."""
    ds = outcome.get("decisions") or []
    if verdict in ("missed-reinplace", "unsafe-reinplace"):
        claimed = [d for d in ds if d.get("claim") == verdict]
        if verdict == "missed-reinplace" and claimed:
            return sorted({f"{d['kind']}:missed" for d in claimed})
        if claimed:
            return sorted({f"{d['kind']}:rule {d.get('rule')}" for d in claimed})
    unsafe = [d for d in ds if d.get("reinplaced") and d.get("truth") == "unsafe"]
    if unsafe:
        return sorted({f"{d['kind']}:rule {d.get('rule')}" for d in unsafe})
    done = [d for d in ds if d.get("reinplaced")]
    return sorted({f"{d['kind']}:reinplaced" for d in done}) or ["no-decision"]


def roots(
    program: Program, outcome: dict[str, Any], pipeline: str, blame: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """The root-cause keys of a shrunk, blamed finding: one per blamed stage.

    A key is ``{"stage", "verdict", "check", "evidence"}``: the blamed stage
    (:mod:`aliasfuzz.oracle.blame`; ``unblamed:<pipeline>`` when no cut reproduced the
    finding), the verdict, the failed check (``inputs`` counts as ``values``), and the
    evidence: for the reinplace pass, the decisions of the pass behind the difference
    (kind and ground-truth rule; not for a gradient finding, whose backward graph's
    decisions the ground truth does not judge); for every other stage, the features the shrunk program
    still needs (:func:`aliasfuzz.campaign.reduce.needed_features`: its op kinds and input
    features, each of which shrinking could not remove without losing the finding); a cost
    finding of check ``witness`` (no stage: ``unblamed:<pipeline>``) adds the rule of its
    equivalent spelling, ``witness:<rule>`` (:mod:`aliasfuzz.oracle.witness`), so that a
    known bug can name it and two spellings of the program are two roots. When the blamed
    stage departs by raising an informative error
    (:func:`aliasfuzz.campaign.rootclass.stage_error`, from ``blame["trail"]``), the
    evidence adds ``raises:<normalized error>``: the features alone put unrelated errors of
    one stage into one entry. The pipeline is not part of the key: one bug seen through
    several pipelines is one entry.
    """
    from aliasfuzz.campaign.rootclass import stage_error
    from aliasfuzz.oracle.differential import check_class

    verdict = outcome["verdict"]
    check = check_class(outcome.get("check"))
    stages = list((blame or {}).get("stages") or []) or [f"unblamed:{pipeline}"]
    keys = []
    for stage in stages:
        # the ground truth judges the forward program's candidates: a gradient finding's
        # reinplace decisions (in the backward graph) have none, so it keys on features
        evidence = (
            _decision_evidence(outcome, verdict) if stage == "reinplace" and check != "grads"
            else _features(program)
        )
        if check == "witness" and outcome.get("witness_rule"):
            evidence = sorted({*evidence, f"witness:{outcome['witness_rule']}"})
        error = stage_error({"root": {"stage": stage}, "trail": (blame or {}).get("trail") or []})
        if error is not None:
            # two errors of one stage behind programs with the same features are two bugs
            # (audit 38, 8157ca25a3: functionalization's bool ``sub`` of an expanded view and
            # its internal-overlap refusal of an ``unfold``, both ``inplace`` + ``view``)
            evidence = sorted({*evidence, f"raises:{error}"})
        keys.append({"stage": stage, "verdict": verdict, "check": check, "evidence": evidence})
    return keys


def known_root(root: dict[str, Any], issue: str) -> dict[str, Any]:
    """The root-cause key of a finding that matches a known upstream bug: one corpus entry
    per bug and verdict, whatever check saw it or which incidental ops its program kept (a
    known bug is already triaged; its variants only add hits to its entry)."""
    return {"stage": root["stage"], "verdict": root["verdict"], "check": "known",
            "evidence": [f"known:{issue}"]}


def entry_id(root: dict[str, Any]) -> str:
    """A stable folder name for a root-cause key: ``<verdict>-<stage>-<hash>``."""
    digest = hashlib.sha256(json.dumps(root, sort_keys=True).encode()).hexdigest()[:10]
    stage = root["stage"].replace(":", "-").replace("_", "-")
    return f"{root['verdict']}-{stage}-{digest}"


def versions() -> dict[str, str]:
    """torch, triton and Python versions of this process, and its intra-op thread count
    (``torch.get_num_threads()``, as the workers run: a vectorized C++ kernel's failure can
    need more than one thread, thirtieth audit 0f197b5fa1), recorded in every entry."""
    import torch

    try:
        import triton

        tv = triton.__version__
    except ImportError:
        tv = "absent"
    return {"torch": torch.__version__, "triton": tv, "python": platform.python_version(),
            "threads": str(torch.get_num_threads())}


#: aliasfuzz's packages that ``pyproject.toml`` maps from the repository root (``fuzz/``,
#: ``oracle/``, ``passes/``) and those nested in ``aliasfuzz/``.
_ROOT_PACKAGES = ("aliasfuzz.fuzz", "aliasfuzz.oracle", "aliasfuzz.passes")
_NESTED_PACKAGES = ("aliasfuzz.campaign", "aliasfuzz.report")


def other_checkout(cwd: Path | None = None, code: Path | None = None) -> str | None:
    """A note when the working directory ``cwd`` is inside an aliasfuzz checkout (a folder
    whose ``pyproject.toml`` names the project ``aliasfuzz``) other than the one whose code
    runs (``code``: the checkout of the imported ``aliasfuzz`` package), else None.

    Not an error: an aliasfuzz installed elsewhere may judge any corpus. But a clone run
    with another clone's venv runs that other clone's code on this clone's corpus, with
    nothing mixed for :func:`mixed_sources` to refuse (fresh user 31's B2)."""
    import aliasfuzz

    code = (code or Path(aliasfuzz.__file__).resolve().parent.parent).resolve()
    here = (cwd or Path.cwd()).resolve()
    for d in (here, *here.parents):
        try:
            text = (d / "pyproject.toml").read_text()
        except OSError:
            continue
        if not re.search(r'(?m)^name\s*=\s*"aliasfuzz"', text):
            return None
        if d == code:
            return None
        return (f"note: this checkout is {d}, but the aliasfuzz running is {code}'s: its code "
                f"judges this corpus (run {d}'s own venv to judge with this checkout's code)")
    return None


def mixed_sources(files: dict[str, str] | None = None) -> str | None:
    """Why this process's aliasfuzz is put together from more than one source tree, or None.

    ``files``: package name -> its ``__init__.py`` (default: the imported packages). An
    editable install maps ``aliasfuzz.fuzz``/``oracle``/``passes`` to ``<root>/fuzz`` etc.
    (``pyproject.toml``'s ``package-dir``); a wheel puts them in ``<site>/aliasfuzz/``.
    A clone run with another clone's virtual environment and ``PYTHONPATH=.`` gets
    ``aliasfuzz`` (and ``campaign``, ``report``) from itself and the rest from the tree the
    environment was installed from: campaign 22 ran ``/work/c22``'s driver with
    ``/work/main``'s oracle while ``/work/main`` moved on, and its cut raised ImportError
    (audit 22 c9602fbf04, filed unblamed)."""
    if files is None:
        import importlib

        files = {name: str(importlib.import_module(name).__file__)
                 for name in ("aliasfuzz", *_ROOT_PACKAGES, *_NESTED_PACKAGES)}
    top = Path(files["aliasfuzz"]).resolve().parent
    odd = []
    for name, file in files.items():
        home = Path(file).resolve().parent
        ok = (home == top if name == "aliasfuzz" else home.parent == top
              if name in _NESTED_PACKAGES else home.parent in (top, top.parent))
        if not ok:
            odd.append(f"{name} from {home}")
    if not odd:
        return None
    return (f"aliasfuzz is imported from more than one source tree (aliasfuzz from {top}; "
            f"{'; '.join(odd)}): run it with the virtual environment installed from this "
            "tree (pip install -e .), so that one version of the code runs the campaign")


@dataclass(frozen=True)
class CorpusEntry:
    """A loaded entry: its folder, program and meta (``meta["expected"]`` has the verdict)."""

    path: Path
    program: Program
    meta: dict[str, Any]

    @property
    def id(self) -> str:
        return self.path.name


def _fsync_write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_entry(corpus: Path, program: Program, meta: dict[str, Any]) -> tuple[Path, bool]:
    """Write an entry atomically; return ``(folder, created)``.

    ``meta`` must hold ``root`` (see :func:`roots`); the folder name is :func:`entry_id`
    of it. When an entry with that id exists already, nothing is written and ``created``
    is False (:func:`add_hit` records the new sighting there).
    """
    from aliasfuzz.campaign.repro import render_repro

    corpus = Path(corpus)
    corpus.mkdir(parents=True, exist_ok=True)
    eid = entry_id(meta["root"])
    final = corpus / eid
    if final.exists():
        return final, False
    tmp = corpus / f".tmp-{eid}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    meta = {"meta_version": META_VERSION, "id": eid, **meta}
    _fsync_write(tmp / "program.json", program.dumps() + "\n")
    _fsync_write(tmp / "meta.json", json.dumps(meta, indent=1, sort_keys=True) + "\n")
    _fsync_write(tmp / "repro.py", render_repro(program, meta))
    _fsync_dir(tmp)
    try:
        os.rename(tmp, final)
    except OSError:  # another writer won the race with the same signature
        shutil.rmtree(tmp)
        return final, False
    _fsync_dir(corpus)
    return final, True


def _body(program_json: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in program_json.items() if k != "meta"}


def compact_hit(
    hit: dict[str, Any], entry_program: dict[str, Any], hits: list[dict[str, Any]]
) -> dict[str, Any]:
    """``hit`` with its shrunk ``program`` replaced by a reference when the entry or an
    earlier hit holds the same program (its ``meta``, seed and index, aside; they are in the
    hit's own fields): ``"program_of": "entry"`` or ``"program_of": k`` (index into
    ``hits``). Most sightings shrink to a program seen before (ninth campaign: 186 of 306
    hits), and each copy was ~500 bytes of ``meta.json`` churn. :func:`hit_program` reads
    either form back."""
    program = hit.get("program")
    if not isinstance(program, dict):
        return hit
    body = _body(program)
    rest = {k: v for k, v in hit.items() if k != "program"}
    if body == _body(entry_program):
        return {**rest, "program_of": "entry"}
    for k, h in enumerate(hits):
        if isinstance(h.get("program"), dict) and _body(h["program"]) == body:
            return {**rest, "program_of": k}
    return hit


def hit_program(hit: dict[str, Any], entry_program: dict[str, Any],
                hits: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The program JSON of ``hit`` (one of ``hits``), following :func:`compact_hit`'s
    reference; None when it has none or the reference is broken."""
    ref = hit.get("program_of")
    if ref == "entry":
        return entry_program
    if isinstance(ref, int) and not isinstance(ref, bool) and 0 <= ref < len(hits):
        return hits[ref].get("program") if isinstance(hits[ref].get("program"), dict) else None
    program = hit.get("program")
    return program if isinstance(program, dict) else None


def add_hit(path: Path, hit: dict[str, Any]) -> bool:
    """Record another sighting ``hit`` of the root cause of entry ``path`` in its
    ``meta.json`` (``hits``: pipeline, campaign, program index, ...) and render its
    ``repro.py`` again from all hits, each file replaced atomically; return False when that
    sighting (same pipeline, campaign and program index) is there already.

    Two campaigns may share a corpus (fresh user 28 ran a second ``run`` beside one in
    flight): the read, the update and the writes hold an exclusive ``flock`` on the entry's
    folder, so that neither loses the other's sighting.
    """
    import fcntl

    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return _add_hit(Path(path), hit)
    finally:
        os.close(fd)  # releases the lock


def _add_hit(path: Path, hit: dict[str, Any]) -> bool:
    meta = _read_json(Path(path) / "meta.json")
    hits = meta.setdefault("hits", [])
    key = ("pipeline", "campaign", "program_index")
    if any(all(h.get(k) == hit.get(k) for k in key) for h in hits):
        return False
    program = Program.from_json(_read_json(Path(path) / "program.json"))
    hits.append(compact_hit(hit, program.to_json(), hits))
    from aliasfuzz.campaign.repro import render_repro

    # the repro picks the most public way to show the bug among all hits (an aot_eager
    # hit after a fast-path one gives torch.compile instead of a harness): render again
    for name, text in (
        ("repro.py", render_repro(program, meta)),
        ("meta.json", json.dumps(meta, indent=1, sort_keys=True) + "\n"),
    ):
        tmp = Path(path) / f".{name}.tmp-{os.getpid()}"
        _fsync_write(tmp, text)
        os.replace(tmp, Path(path) / name)
    _fsync_dir(Path(path))
    return True


@dataclass(frozen=True)
class Recorded:
    """Where :func:`record` put a finding: one entry folder per root cause, in blame order
    (``paths``), and for each of them the upstream issue of the known bug its root cause
    matches, or None (``knowns``, aligned with ``paths``). Each entry's own: a finding's
    second root need not be the known bug its first is."""

    paths: tuple[Path, ...]
    knowns: tuple[str | None, ...]


def record(
    corpus: Path,
    original: Program,
    small: Program,
    outcome: dict[str, Any],
    pipeline: str,
    blame: dict[str, Any],
    bugs: list[Any],
    provenance: dict[str, Any],
) -> Recorded:
    """Write a shrunk, blamed finding under each of its root causes (:func:`roots`): a new
    entry, or one more sighting (``hits``, :func:`add_hit`) of an entry already there, the
    one with the same key or one that is the same bug under another key
    (:func:`aliasfuzz.campaign.rootclass.same_bug`).

    ``provenance`` holds ``campaign``, ``seed``, ``program_index``, ``device``,
    ``pipeline_options`` and ``shrink_executions``; ``bugs`` are the known upstream bugs
    (:func:`aliasfuzz.campaign.known.load_known`). Meta keys: ``corpus/README.md``.
    """
    from aliasfuzz.campaign.known import match
    from aliasfuzz.campaign.rootclass import find_same

    ops = sorted({op.op for op in small.body})
    statements = {"original": len(original.body), "minimized": len(small.body)}
    hit = {
        "pipeline": pipeline,
        "verdict": outcome["verdict"],
        "check": outcome.get("check"),
        "campaign": provenance.get("campaign"),
        "seed": provenance.get("seed"),
        "program_index": provenance.get("program_index"),
        "statements": statements,
        "stage": blame.get("stage"),
        "full": blame.get("full"),
        # what differs on this sighting: a repro showing this hit states it (repro.title)
        "explanation": clip(str(outcome.get("explanation") or "").split("\n")[0], 300),
        "program": small.to_json(),
    }
    if provenance.get("pipeline_options"):  # e.g. dynamic shapes: its repro compiles so too
        hit["pipeline_options"] = provenance["pipeline_options"]
    # a sighting recorded as found, not shrunk (pool._known_first): its program is not a
    # minimum, and a repro prefers any shrunk sighting (repro.plan)
    if provenance.get("known_first"):
        hit["known_first"] = provenance["known_first"]
    paths: list[Path] = []
    knowns: list[str | None] = []
    for root in roots(small, outcome, pipeline, blame):
        bug, related = match(bugs, root, set(ops), {pipeline}, blame.get("controls"),
                             blame.get("controls_removed"), str(outcome.get("explanation") or ""),
                             program=small)
        if bug:
            root = known_root(root, bug.issue)
        meta = {
            "root": root,
            "stages": blame.get("stages") or [],
            "trail": blame.get("trail") or [],
            "blame_reason": blame.get("reason", ""),
            "full": blame.get("full"),
            "known": bug.to_json() if bug else None,
            "related": [{**b.to_json(), "related": True} for b in related],
            **({"controls": blame["controls"]} if blame.get("controls") else {}),
            **({"controls_removed": blame["controls_removed"]}
               if blame.get("controls_removed") else {}),
            # null when not moved, so that only an older entry (no key) has its repro
            # parse the trail for it (repro.pass_off_move)
            "moved_by_pass_off": blame.get("moved_by_pass_off"),
            "ops": ops,
            "expected": {
                "pipeline": pipeline,
                "verdict": outcome["verdict"],
                "check": outcome.get("check"),
            },
            "explanation": outcome.get("explanation", ""),
            "diff": outcome.get("diff", ""),
            "versions": versions(),
            **{k: v for k, v in provenance.items() if k != "known_first"},
            "statements": statements,
            "hits": [compact_hit(hit, small.to_json(), [])],
        }
        same = find_same(_metas(Path(corpus)), meta)  # one entry per bug (rootclass.py)
        if same is not None:
            path, created = same, False
        else:
            path, created = write_entry(Path(corpus), small, meta)
        if not created:
            add_hit(path, hit)
        paths.append(path)
        knowns.append(bug.issue if bug else None)
    return Recorded(tuple(paths), tuple(knowns))


def _metas(corpus: Path) -> list[tuple[Path, dict[str, Any]]]:
    """``(folder, meta)`` of the entries of ``corpus`` that have a readable ``meta.json``."""
    out = []
    for p in list_entries(corpus):
        try:
            meta = json.loads((p / "meta.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict):
            out.append((p, meta))
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise InvalidArgument(f"{path}: missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path}: not valid JSON ({e})") from None
    except OSError as e:  # a directory, a symlink loop, no permission (fresh user 51's B1)
        raise InvalidArgument(f"{path}: cannot be read ({e.strerror or e})") from None


_STR, _OPT_STR, _OPT_INT = (str,), (str, type(None)), (int, type(None))

#: The keys of ``meta.json`` that aliasfuzz reads, with the types it reads them as (an
#: absent key is allowed: older entries and hand-written ones lack some). A wrong type
#: was accepted by replay, report and run's start-up check and failed (or was written
#: over) only when a later campaign added a sighting (fresh user 21: ``"hits": "oops"``).
_META_TYPES: dict[str, tuple[type, ...]] = {
    "hits": (list,), "root": (dict,), "expected": (dict,), "pipeline_options": (dict,),
    "device": _STR, "stages": (list,), "trail": (list,), "related": (list,), "ops": (list,),
    "statements": (dict,), "versions": (dict,), "known": (dict, type(None)),
    "explanation": _STR, "diff": _STR, "blame_reason": _STR, "full": _OPT_STR, "id": _STR,
    "dynamic": (bool,), "moved_by_pass_off": (dict, type(None)),
}
_MOVED_TYPES = {"cut": _STR, "own_off": (bool,)}
_ROOT_TYPES = {"stage": _STR, "verdict": _STR, "check": _OPT_STR, "evidence": (list,)}
_EXPECTED_TYPES = {"pipeline": _STR, "verdict": _STR, "check": _OPT_STR}
#: A sighting's keys (``hits[k]``); ``program_of`` is checked by :func:`hit_program`.
#: ``campaign``, ``seed`` and ``program_index`` are null for a sighting whose program did
#: not come from a campaign (:func:`record`'s provenance holds none for it).
_HIT_TYPES = {
    "pipeline": _STR, "campaign": _OPT_STR, "verdict": _STR, "check": _OPT_STR,
    "stage": _OPT_STR, "full": _OPT_STR, "explanation": _STR, "program": (dict,),
    "program_index": _OPT_INT, "seed": _OPT_INT, "statements": (dict,),
}


def _type_words(types: tuple[type, ...]) -> str:
    words = {str: "a string", int: "an integer", bool: "true or false", list: "a list",
             dict: "an object", type(None): "null"}
    return " or ".join(words[t] for t in types)


def _check_fields(obj: dict[str, Any], types: dict[str, tuple[type, ...]], where: str,
                  name: str, required: tuple[str, ...] = ()) -> None:
    for key in required:
        if key not in obj:
            raise InvalidArgument(f"{where}: {name}{key} missing")
    for key, want in types.items():
        v = obj.get(key)
        # bool is an int subclass: a true program_index is as wrong as a string
        if key in obj and (not isinstance(v, want) or (isinstance(v, bool) and bool not in want)):
            raise InvalidArgument(f"{where}: {name}{key} must be {_type_words(want)}, "
                                  f"not {json.dumps(v)[:40]}")


def _check_meta_types(meta: dict[str, Any], where: Path) -> None:
    """Raise :class:`InvalidArgument` (one line naming ``where``) when a key of ``meta``
    that aliasfuzz reads has the wrong type (:data:`_META_TYPES`): ``hits`` a list of
    objects, ``root`` an object with ``stage``, ``verdict``, ``check`` and ``evidence``,
    ``expected`` an object of strings, and so on."""
    _check_fields(meta, _META_TYPES, str(where), "")
    _check_fields(meta["expected"], _EXPECTED_TYPES, str(where), "expected.")
    if "root" in meta:
        _check_fields(meta["root"], _ROOT_TYPES, str(where), "root.",
                      required=tuple(_ROOT_TYPES))
    if meta.get("moved_by_pass_off") is not None:
        _check_fields(meta["moved_by_pass_off"], _MOVED_TYPES, str(where), "moved_by_pass_off.",
                      required=tuple(_MOVED_TYPES))
    for k, hit in enumerate(meta.get("hits") or []):
        if not isinstance(hit, dict):
            raise InvalidArgument(f"{where}: hits[{k}] must be an object, "
                                  f"not {json.dumps(hit)[:40]}")
        _check_fields(hit, _HIT_TYPES, str(where), f"hits[{k}].")


def _check_meta_values(meta: dict[str, Any], where: Path) -> None:
    """Raise :class:`InvalidArgument` (one line naming ``where``) for values of ``meta``
    of the right type that aliasfuzz cannot read right: a ``meta_version`` newer than
    :data:`META_VERSION`, a verdict (``root``'s, a sighting's) that is no
    :class:`~aliasfuzz.oracle.verdict.Verdict`, a sighting's pipeline that is none, and a
    ``root`` that does not hash to an ``id`` of :func:`entry_id`'s form (later sightings of
    that root would be filed elsewhere; a hand-named entry's id claims no root). Fresh user 55's B2: ``root.verdict = "miscompil"``,
    ``meta_version = 7`` and ``hits[0].pipeline = "inductr"`` were accepted by run and replay."""
    from aliasfuzz.campaign import _debug
    from aliasfuzz.oracle.verdict import Verdict
    from aliasfuzz.passes.pipelines import PIPELINES

    version = meta.get("meta_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= META_VERSION:
        raise InvalidArgument(f"{where}: meta_version {json.dumps(version)[:20]} is not one this "
                              f"aliasfuzz reads (1 to {META_VERSION})")
    named = [("expected.verdict", (meta.get("expected") or {}).get("verdict")),
             ("root.verdict", (meta.get("root") or {}).get("verdict"))]
    named += [(f"hits[{k}].verdict", h.get("verdict")) for k, h in enumerate(meta.get("hits") or [])]
    for key, v in named:
        if v is None:
            continue
        try:
            Verdict.parse(v)
        except InvalidArgument as e:
            raise InvalidArgument(f"{where}: {key}: {e}") from None
    pipelines = set(PIPELINES) | set(_debug.DEBUG_PIPELINES)
    for k, h in enumerate(meta.get("hits") or []):
        if "pipeline" in h and h["pipeline"] not in pipelines:
            raise InvalidArgument(f"{where}: hits[{k}].pipeline {h['pipeline']!r} is no pipeline "
                                  f"(one of {', '.join(sorted(PIPELINES))})")
    eid = meta.get("id")
    # an id of entry_id's form claims its root; a hand-named entry ("01-pipeline") claims none
    if isinstance(eid, str) and re.fullmatch(r"[\w-]+-[0-9a-f]{10}", eid) and "root" in meta \
            and entry_id(meta["root"]) != eid:
        raise InvalidArgument(f"{where}: root {json.dumps(meta['root'])[:80]} does not hash to the "
                              f"entry's id {meta['id']!r} (edited by hand?)")


def load_entry(path: str | os.PathLike) -> CorpusEntry:
    """Load ``path`` (an entry folder) from JSON; :class:`InvalidArgument` if corrupt."""
    p = Path(path)
    if not p.is_dir():
        raise InvalidArgument(f"{p}: not a corpus entry folder")
    meta = _read_json(p / "meta.json")
    if not isinstance(meta, dict):  # fresh user 32's B6: a list was "no 'expected' verdict"
        raise InvalidArgument(f"{p / 'meta.json'}: must be a JSON object, not "
                              f"{type(meta).__name__} {json.dumps(meta)[:40]}")
    if "expected" not in meta:
        raise InvalidArgument(f"{p / 'meta.json'}: no 'expected' verdict")
    if not isinstance(meta["expected"], dict):
        raise InvalidArgument(f"{p / 'meta.json'}: 'expected' must be an object "
                              f"{{\"pipeline\", \"verdict\", \"check\"}}, not {meta['expected']!r:.40}")
    for key in ("pipeline", "verdict"):
        if key not in meta["expected"]:
            raise InvalidArgument(f"{p / 'meta.json'}: expected.{key} missing")
        if not isinstance(meta["expected"][key], str):  # fresh user 31's B6: was "missing"
            raise InvalidArgument(f"{p / 'meta.json'}: expected.{key} must be a string, not "
                                  f"{meta['expected'][key]!r:.40}")
    # an unknown verdict replayed as "changed", exit 1 (fresh user 39's B11): _check_meta_values
    _check_meta_types(meta, p / "meta.json")
    _check_meta_values(meta, p / "meta.json")
    if isinstance(meta.get("id"), str) and meta["id"] != p.name:
        # the id is the root-cause hash the folder is named by (entry_id): a copy renamed by
        # hand, or an id edited, would file sightings under the wrong root (fresh user 30)
        raise InvalidArgument(f"{p / 'meta.json'}: id {meta['id']!r} is not the entry's "
                              f"folder name {p.name!r}")
    data = _read_json(p / "program.json")  # its errors already name the file
    try:
        program = Program.from_json(data)
        program.validate()
    except NoEagerMeaning:
        pass  # well-formed, no single eager meaning: judged invalid-program (replay: changed)
    except InvalidArgument as e:
        raise InvalidArgument(f"{p / 'program.json'}: {e}") from None
    for k, hit in enumerate(meta.get("hits") or []):
        # a sighting's own minimized program is what its repro may show (fresh user 57's B2:
        # "program": {"body": "junk"} in a hit was replayed as "reproduces")
        if isinstance(hit, dict) and hit.get("program") is not None:
            try:
                Program.from_json(hit["program"]).validate()
            except NoEagerMeaning:
                pass
            except (InvalidArgument, TypeError, KeyError, AttributeError, ValueError) as e:
                raise InvalidArgument(f"{p / 'meta.json'}: hits[{k}].program: {e}") from None
    return CorpusEntry(p, program, meta)


def list_entries(corpus: str | os.PathLike) -> list[Path]:
    """Entry folders of ``corpus`` in name order: subfolders holding a ``meta.json`` or a
    ``program.json`` (temporary ``.tmp-*`` folders and other folders, such as the seed
    twins in ``corpus/seeds``, are not entries)."""
    c = Path(corpus)
    if not c.is_dir():
        return []
    return sorted(
        d
        for d in c.iterdir()
        if d.is_dir()
        and not d.name.startswith(".")
        and ((d / "meta.json").exists() or (d / "program.json").exists())
    )


def known_signatures(corpus: str | os.PathLike) -> set[str]:
    """Ids of the entries already in ``corpus`` (a finding is new when its id is not here)."""
    return {p.name for p in list_entries(corpus)}


def _writer_alive(tmp: Path) -> bool:
    """Whether the process named in ``.tmp-<id>-<pid>`` is still running (it may be
    another campaign writing into the same corpus)."""
    pid = tmp.name.rsplit("-", 1)[-1]
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def clean_temp(corpus: str | os.PathLike) -> list[Path]:
    """Remove half-written ``.tmp-*`` folders left by a killed writer; return them.

    A folder whose writer process is still alive (another campaign sharing the corpus) is
    left alone."""
    c = Path(corpus)
    gone = [g for g in sorted(c.glob(".tmp-*")) if not _writer_alive(g)] if c.is_dir() else []
    for g in gone:
        shutil.rmtree(g, ignore_errors=True)
    return gone
