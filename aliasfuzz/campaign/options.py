"""Campaign options: one dataclass, merged from defaults, a TOML config file and flags.

Precedence (lowest first): the defaults below, the ``[run]`` table of ``--config FILE``
(or the top level of that file), then the command-line flags the user actually gave.
Every check raises :class:`~aliasfuzz.errors.InvalidArgument` with a one-line message.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.limits import MAX_STATEMENTS

__all__ = [
    "BUILTIN_PIPELINES",
    "COMPILE_PIPELINES",
    "DEFAULT_PIPELINES",
    "CampaignOptions",
    "check_device",
    "check_writable_dir",
    "merge_options",
    "pipeline_options",
    "resume_options",
    "task_options",
]

#: The README's main job: the CPU pipelines that decide where to write in place.
DEFAULT_PIPELINES = ("inductor-reinplace", "inductor", "aot_eager", "fx-reinplace", "torchscript")

#: Every built-in pipeline (``aliasfuzz.passes.pipelines.PIPELINES``, tested equal), known
#: without importing torch, so that ``--pipelines bogus`` fails at once; debug pipelines
#: (``debug-*``, enabled by an environment variable) are checked after torch is imported.
BUILTIN_PIPELINES = ("eager", "aot_eager", "inductor", "inductor-reinplace", "inductor-noreinplace",
                     "fx-reinplace", "torchscript")

#: The pipelines that compile through ``torch.compile`` (Dynamo), the ones a program marked
#: ``dynamic`` (``--dynamic-share``) runs with ``PipelineOptions(dynamic=True)``
#: (``aliasfuzz.passes.pipelines.DYNAMO_BACKENDS``, tested equal). ``fx-reinplace``
#: (``make_fx``), ``torchscript`` and ``eager`` have no ``torch.compile(dynamic=...)``: a
#: dynamic program runs them as any other.
COMPILE_PIPELINES = ("aot_eager", "inductor", "inductor-reinplace", "inductor-noreinplace")


def task_options(pipeline_options: dict[str, dict[str, Any]], pipeline: str,
                 program: Any) -> dict[str, Any]:
    """The options (a JSON dict of ``PipelineOptions`` fields) ``program`` runs with on
    ``pipeline`` in a campaign: the campaign's ``pipeline_options`` of that pipeline, with
    ``dynamic`` true when the program is marked dynamic (``meta["dynamic"]``, drawn by
    :class:`aliasfuzz.campaign.sources.Programs`) and the pipeline is one of
    :data:`COMPILE_PIPELINES`. Shrinking keeps a program's ``meta``, so its steps, the blame
    and the corpus entry (``pipeline_options`` in ``meta.json``) see the same options."""
    out = dict(pipeline_options.get(pipeline) or {})
    if program.meta.get("dynamic") and pipeline in COMPILE_PIPELINES:
        out["dynamic"] = True
    return out


def pipeline_options(raw: Any, where: str = "pipeline_options"):
    """Build the :class:`~aliasfuzz.passes.pipelines.PipelineOptions` of one pipeline.

    ``raw`` is a dict of its fields (as saved in options.json and in a corpus entry's
    meta.json). Raises :class:`InvalidArgument` (one line naming ``where``) for a value that
    is not a dict, an unknown field, or an unknown ``torch._inductor.config`` entry, so a
    bad option is reported before any work instead of inside a worker.
    """
    from aliasfuzz.passes.pipelines import PipelineOptions

    if not isinstance(raw, dict):
        raise InvalidArgument(f"{where} must be a table/dict, not {type(raw).__name__}")
    fields = {f.name for f in dataclasses.fields(PipelineOptions)}
    unknown = sorted(set(raw) - fields)
    if unknown:
        raise InvalidArgument(
            f"{where}: unknown option {unknown[0]!r} (known: {', '.join(sorted(fields))})"
        )
    from aliasfuzz.passes.torchscript import TorchScriptOptions

    # a value of the wrong type ran: every program an internal error in the workers, exit 0
    # (fresh user 34's B2, dynamic = "no"; B3, an unknown torchscript option)
    _check_field_types(PipelineOptions, raw, where)
    if isinstance(raw.get("torchscript"), dict):
        _check_field_types(TorchScriptOptions, raw["torchscript"], f"{where}.torchscript")
    try:
        if "torchscript" in raw:
            TorchScriptOptions.from_dict(raw["torchscript"])
        return PipelineOptions(**raw)
    except (InvalidArgument, TypeError) as e:  # TypeError: a field of the wrong kind
        raise InvalidArgument(f"{where}: {e}") from None


def _unknown_pipeline(name: Any, known_pipelines: Any) -> str | None:
    """``unknown pipeline 'x' (known: ...)`` when ``name`` is not one of ``known_pipelines``
    (None: torch is not imported yet, so the built-in names, and ``debug-*`` names are
    checked later), else None: one test for ``pipelines`` and ``pipeline_options``."""
    if known_pipelines is None:
        known = BUILTIN_PIPELINES
        if name in known or str(name).startswith("debug-"):
            return None
    elif name in (known := known_pipelines):
        return None
    return f"unknown pipeline {name!r} (known: {', '.join(sorted(known))})"


def _check_field_types(cls: type, raw: dict[str, Any], where: str) -> None:
    """Raise :class:`InvalidArgument` when a value of ``raw`` is not of the kind of
    dataclass ``cls``'s field of that name, judged by the field's default: a bool, an
    integer (not a bool), a number, a string, or a table (a field whose default is a dict)."""
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            continue
        v, default = raw[f.name], f.default
        if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = f.default_factory()  # type: ignore[misc]
        if isinstance(default, bool):
            ok, what = isinstance(v, bool), "true or false"
        elif isinstance(default, int):
            ok, what = isinstance(v, int) and not isinstance(v, bool), "an integer"
        elif isinstance(default, float):
            ok, what = isinstance(v, (int, float)) and not isinstance(v, bool), "a number"
        elif isinstance(default, str):
            ok, what = isinstance(v, str), "a string"
        elif isinstance(default, dict):
            ok, what = isinstance(v, dict), "a table"
        else:
            continue
        if not ok:
            raise InvalidArgument(f"{where}.{f.name} must be {what}, not {v!r}")


def check_device(device: Any, present: bool = True) -> None:
    """Raise :class:`InvalidArgument` unless ``device`` is cpu, or cuda with a GPU present
    (``present=False``: cuda without asking torch, for a device this host will not use)."""
    if device not in ("cpu", "cuda"):
        raise InvalidArgument(f"unknown device {device!r} (cpu or cuda)")
    if device == "cuda" and present:
        import torch

        if not torch.cuda.is_available():
            raise InvalidArgument("device 'cuda' asked for, but torch.cuda.is_available() is False")


#: Field name -> (accepted types, what the message calls it); bool is never a number here.
_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "programs": ((int,), "an integer"),
    "time": ((int, float), "a number of seconds"),
    "seed": ((int,), "an integer"),
    "device": ((str,), "a string"),
    "workers": ((int,), "an integer"),
    "timeout": ((int, float), "a number of seconds"),
    "recycle": ((int,), "an integer"),
    "corpus": ((str,), "a path"),
    "report": ((str,), "a path"),
    "state": ((str,), "a path"),
    "shrink": ((bool,), "true or false"),
    "share_trace": ((bool,), "true or false"),
    "shrink_once": ((bool,), "true or false"),
    "known_first": ((bool,), "true or false"),
    "kernel_cache": ((str,), "'shared' or 'worker'"),
    "shrink_budget": ((int,), "an integer"),
    "max_statements": ((int,), "an integer"),
    "mutate": ((int, float), "a share between 0 and 1"),
    "grad_share": ((int, float), "a share between 0 and 1"),
    "dynamic_share": ((int, float), "a share between 0 and 1"),
    "pipeline_options": ((dict,), "a table {pipeline = {option = value}}"),
}


def _wrong_type(name: str, v: Any) -> str | None:
    """``must be <what>, not <v>`` when ``v`` is not of option ``name``'s :data:`_TYPES`
    (a bool is no number), else None."""
    types, what = _TYPES[name]
    if isinstance(v, bool) and bool not in types or not isinstance(v, types):
        return f"must be {what}, not {v!r}"
    return None


def _check_types(opts: CampaignOptions) -> None:
    for name in _TYPES:
        v = getattr(opts, name)
        if v is None and name in ("programs", "time", "report"):
            continue
        bad = _wrong_type(name, v)
        if bad is not None:
            raise InvalidArgument(f"{opts.from_config.get(name, f'option {name}')} {bad}")
    for name in ("pipelines", "fail_on", "plugins"):
        if not all(isinstance(x, str) for x in getattr(opts, name)):
            raise InvalidArgument(f"{opts.from_config.get(name, f'option {name}')} must be a "
                                  "list of strings")


#: Where a campaign's workers keep Inductor's kernel cache (:class:`CampaignOptions`).
KERNEL_CACHES = ("shared", "worker")

#: The most worker processes a campaign starts (a few per core of the largest host).
MAX_WORKERS = 512
#: The least ``timeout`` of a campaign of real pipelines (seconds per program and pipeline):
#: one Inductor compile of a small program takes 1-5 s on a loaded 2-core box. The harness's
#: ``debug-*`` pipelines (a hang on purpose) may use less.
MIN_TIMEOUT = 10.0

@dataclass
class CampaignOptions:
    """Everything one campaign needs; JSON-able (it is saved in the campaign directory).

    Budget: ``programs`` (a count) or ``time`` (seconds of wall clock); with neither, 120 s.
    ``workers``: worker processes; by default ``min(4, cores)``, with ``device`` cuda that
    many per GPU of each GPU's share of the cores (the workers are spread over the GPUs:
    :func:`aliasfuzz.campaign.gpus.default_workers`). ``timeout`` is seconds per program
    and pipeline; ``recycle`` is the number of tasks a worker runs before it is replaced
    (bounds memory growth). ``fail_on`` names the
    verdicts whose new findings make ``aliasfuzz run`` exit 1. ``shrink_budget`` is the
    number of re-executions a finding's minimization may spend. ``plugins`` are pass
    plugin files (:mod:`aliasfuzz.plugins`) every worker imports before its first program.
    ``share_trace``: a program's Dynamo-fronted pipelines run in one worker task from one
    Dynamo capture (:mod:`aliasfuzz.passes.shared`; the same verdicts). Off by default: on
    the 2-core CPU box it did not measurably pay (``bench/runs/stages-cpu-2026-12-01.txt``).
    ``shrink_once``: a program's failure seen the same way on several pipelines is shrunk
    once; the other pipelines try that shrunk program first and keep it when it fails
    there the same way and blames to the same stages (:mod:`aliasfuzz.campaign.follow`).
    ``known_first``: a finding that a known bug's workaround (its ``control`` in
    ``known.toml``) removes and whose cut names only known bugs already in the corpus is
    recorded as one more sighting of that bug as found, not shrunk
    (:meth:`aliasfuzz.campaign.pool.Pool._known_first`).
    ``kernel_cache``: ``shared`` (one ``TORCHINDUCTOR_CACHE_DIR`` under ``state`` for every
    worker of every campaign: Inductor's kernel cache and its CPU ISA probes are built
    once, :func:`aliasfuzz.campaign.pool.kernel_cache_dir`) or ``worker`` (one per worker
    and campaign, as before).
    ``mutate``: the share of programs made by mutating a program of the corpus or of
    ``corpus/seeds`` (:mod:`aliasfuzz.fuzz.mutate`) instead of generating one; 0.33 by
    default (issue 15: a third of each campaign; audit 22 found 5 of its 10 audited
    findings in mutants, all 5 genuine with the right stage), 0 generates every program
    fresh. The programs to mutate are those present
    when the campaign starts (saved in its folder, so that a resumed campaign draws the
    same programs); program ``i`` is a function of the seed, ``i`` and that list.
    ``grad_share``: the share of generated programs whose unwritten floating inputs require
    grad, so that every ``torch.compile`` pipeline's gradients are compared with eager's
    (:func:`aliasfuzz.fuzz.grads.mark_grad_leaves`; decided after the draw, so the ops of
    program ``i`` do not depend on it); 0 turns gradients off.
    ``dynamic_share``: the share of programs compiled with dynamic shapes
    (``torch.compile(dynamic=True)``, :func:`task_options`) on every pipeline of
    :data:`COMPILE_PIPELINES`, chosen per ``(seed, i)`` from a random stream of its own
    (:func:`aliasfuzz.campaign.sources.mark_dynamic`), so the ops of program ``i`` do not
    depend on it; 0 compiles every program with static shapes.
    """

    programs: int | None = None
    time: float | None = None
    seed: int = 0
    pipelines: tuple[str, ...] = DEFAULT_PIPELINES
    device: str = "cpu"
    workers: int | None = None  # None: aliasfuzz.campaign.gpus.default_workers
    timeout: float = 120.0
    recycle: int = 200
    fail_on: tuple[str, ...] = ("miscompile",)
    corpus: str = "corpus"
    report: str | None = "reports"
    state: str = ".aliasfuzz"
    shrink: bool = True
    share_trace: bool = False
    shrink_once: bool = True
    known_first: bool = True
    kernel_cache: str = "shared"
    shrink_budget: int = 40
    max_statements: int = 8
    mutate: float = 0.33
    grad_share: float = 0.25
    dynamic_share: float = 0.1
    pipeline_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    plugins: tuple[str, ...] = ()
    #: option name -> how an error names it when its value came from a ``--config`` file
    #: (``config file 'c.toml': [run] mutate``; set by :func:`merge_options`): a bad value
    #: there is not the flag's (fresh user 22 was told ``--mutate must be ...`` of a file's
    #: ``mutate = 5``). Not a field: never saved in options.json.
    from_config: ClassVar[dict[str, str]] = {}
    #: option name -> (how an error names it, value) of each ``--config`` value that a flag
    #: replaced (set by :func:`merge_options`), checked by :meth:`validate` all the same.
    #: Not a field either.
    overridden: ClassVar[dict[str, tuple[str, Any]]] = {}

    def __post_init__(self) -> None:
        for name in ("pipelines", "plugins", "fail_on"):
            v = getattr(self, name)
            if isinstance(v, str):
                v = _split(v)
            if not isinstance(v, list | tuple):
                raise InvalidArgument(f"option {name} must be a list of strings, not {v!r}")
            setattr(self, name, tuple(v))
        if self.programs is None and self.time is None:
            self.time = 120.0
        if self.workers is None:  # min(4, cores); with --device cuda, per GPU (.gpus)
            from aliasfuzz.campaign.gpus import default_workers

            self.workers = default_workers(self.device)

    def validate(self, known_pipelines: set[str] | None = None, *,
                 host: bool = True) -> CampaignOptions:
        """Check every field; raise :class:`InvalidArgument` on the first bad one.

        Types first (a config file can hold anything), then ranges, the device (cuda needs
        ``torch.cuda.is_available()``), the pipelines (against ``known_pipelines``; without
        it, against :data:`BUILTIN_PIPELINES`, leaving ``debug-*`` names to a later call
        with torch imported), and every pipeline's options, built
        once as :class:`~aliasfuzz.passes.pipelines.PipelineOptions` so that an unknown
        config entry fails here, before the campaign starts. Then the config file's values
        that flags replaced (:attr:`overridden`), the same way but as values only
        (``host=False``: no GPU needed for ``device = "cuda"``, no look at the disk for
        ``corpus``), named by file and key.
        """
        from aliasfuzz.oracle.verdict import Verdict

        _check_types(self)
        if self.programs is not None and self.programs < 1:
            raise self._bad("programs", "must be >= 1")
        if self.time is not None and not (math.isfinite(self.time) and self.time > 0):
            raise self._bad("time", "must be a finite number > 0 of seconds")
        if self.seed < 0:
            raise self._bad("seed", "must be >= 0")
        if not 1 <= self.workers <= MAX_WORKERS:
            # each worker is a process and a thread; 100,000 failed to start a thread
            raise self._bad("workers", f"must be between 1 and {MAX_WORKERS}")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise self._bad("timeout", "must be a finite number > 0 of seconds")
        if self.recycle < 1:
            raise self._bad("recycle", "must be >= 1")
        if self.shrink_budget < 0:
            raise self._bad("shrink_budget", "must be >= 0")
        if self.kernel_cache not in KERNEL_CACHES:
            raise self._bad("kernel_cache", f"must be one of {', '.join(KERNEL_CACHES)}",
                            f"--kernel-cache {self.kernel_cache!r}: one of "
                            f"{', '.join(KERNEL_CACHES)}")
        if not 1 <= self.max_statements <= MAX_STATEMENTS:
            # the generator's bound too: it was make_config's, in the option's field name,
            # after torch was imported (fresh user 40's B4)
            bounds = f"must be in [1, {MAX_STATEMENTS}]"
            raise self._bad("max_statements", bounds,
                            f"{self.source('max_statements')} {bounds}, got {self.max_statements}")
        for name in ("mutate", "grad_share", "dynamic_share"):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0 <= v <= 1):
                raise self._bad(name, "must be a share between 0 and 1")
        try:
            check_device(self.device, present=host)
        except InvalidArgument as e:
            raise self._bad("device", str(e), str(e)) from None
        missing = next((x for x in self.plugins if not Path(x).is_file()), None) if host else None
        if missing is not None:  # said before torch is imported (fresh user 39's B13: 22 s)
            # a folder is not "no such file" (fresh user 40's B5)
            said = f"plugin {missing}: {'not a file' if Path(missing).exists() else 'no such file'}"
            raise self._bad("plugins", said, said)
        if host and Path(self.corpus).exists() and not Path(self.corpus).is_dir():
            raise InvalidArgument(f"{self.source('corpus')} {self.corpus}: exists and is not "
                                  "a directory")
        if not self.pipelines:
            raise self._bad("pipelines", "is empty")
        bad = [p for p in self.pipelines if _unknown_pipeline(p, known_pipelines)]
        if bad:
            what = _unknown_pipeline(bad[0], known_pipelines)
            raise self._bad("pipelines", what, what)
        twice = next((p for k, p in enumerate(self.pipelines) if p in self.pipelines[:k]), None)
        if twice is not None:  # each program ran twice, its counts doubled (fresh user 33's B2)
            raise self._bad("pipelines", f"names {twice!r} twice")
        if self.timeout < MIN_TIMEOUT and not all(p.startswith("debug-") for p in self.pipelines):
            # fresh user 47's B1: --timeout 0.05 filed every program as a hang, shrank one to
            # `return None` and drafted an upstream issue for it
            raise self._bad("timeout", f"must be at least {MIN_TIMEOUT:g} seconds: a "
                                       "compile takes seconds, and a shorter limit files the "
                                       "harness's own limit as a hang")
        if not self.fail_on:  # a campaign that can never exit 1 (fresh user 33's B3)
            raise self._bad("fail_on", "is empty (name the finding verdicts that make run "
                                       "exit 1: miscompile by default)")
        for v in self.fail_on:
            try:
                finding = Verdict.parse(v).is_finding
            except InvalidArgument as e:
                raise self._bad("fail_on", str(e), str(e)) from None
            if not finding:
                raise self._bad("fail_on", f"{v!r} is not a finding verdict",
                                f"--fail-on {v!r} is not a finding verdict")
        where = self.from_config.get("pipeline_options", "pipeline_options")
        for name, raw in self.pipeline_options.items():
            unknown = _unknown_pipeline(name, known_pipelines)
            if unknown:  # options of a misspelled pipeline were ignored (fresh user 34's B1)
                raise InvalidArgument(f"{where}.{name}: {unknown}")
            pipeline_options(raw, f"{where}.{name}")
        if self.overridden:
            # a host check (a GPU for "cuda", the corpus on disk) is for the value in use: a
            # file's device = "cuda" is right on a CPU box that runs it with --device cpu
            self._as_configured().validate(known_pipelines, host=False)
        return self

    def _as_configured(self) -> CampaignOptions:
        """These options with the config file's values that flags replaced put back, each
        named by file and key (:attr:`overridden`): :meth:`validate` checks those values in
        them, so that every per-key check applies to them as written."""
        shadow = dataclasses.replace(self, **{k: v for k, (_, v) in self.overridden.items()})
        shadow.from_config = {**self.from_config,
                              **{k: named for k, (named, _) in self.overridden.items()}}
        return shadow

    def source(self, name: str) -> str:
        """How a message names option ``name``: its flag (``--shrink-budget``), or the
        config file and key it came from (:attr:`from_config`)."""
        return self.from_config.get(name) or "--" + name.replace("_", "-")

    def _bad(self, name: str, what: str, flag_message: str | None = None) -> InvalidArgument:
        """The one-line error of option ``name``'s bad value: ``<flag> <what>`` (or
        ``flag_message`` whole), or, for a value from a config file, ``config file 'F':
        [run] <key> <what>, not <value>`` (the value shown: the file is not in front of
        the user as a flag is). A ``what`` that is a message of its own (a check's
        InvalidArgument) follows a colon instead."""
        if name in self.from_config:
            value = getattr(self, name)
            if isinstance(value, tuple):
                value = list(value)
            if flag_message is not None and what == flag_message:
                return InvalidArgument(f"{self.from_config[name]} = {value!r}: {what}")
            return InvalidArgument(f"{self.from_config[name]} {what}, not {value!r}")
        return InvalidArgument(flag_message or f"{self.source(name)} {what}")

    def to_json(self) -> dict[str, Any]:
        """The fields as saved in ``options.json``; the folders (``corpus``, ``state``,
        ``report``) as absolute paths, so that ``--resume`` from another working directory
        writes where the campaign began (a fresh user's resume from the parent folder wrote
        its report beside the checkout)."""
        d = dataclasses.asdict(self)
        for key in ("corpus", "state", "report"):
            if d.get(key) not in (None, "", "none"):  # "none": --report none, no report
                d[key] = str(Path(d[key]).absolute())
        d["pipelines"] = list(self.pipelines)
        d["fail_on"] = list(self.fail_on)
        d["plugins"] = list(self.plugins)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CampaignOptions:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise InvalidArgument(f"unknown campaign option {unknown[0]!r}")
        return cls(**d)


def _split(value: Any, name: str = "option") -> tuple[str, ...]:
    if isinstance(value, str):
        items = [p.strip() for p in value.split(",")]
        if value.strip() and not all(items):
            raise InvalidArgument(f"{name} has an empty item: {value!r}")
        return tuple(p for p in items if p)
    if not isinstance(value, list | tuple):
        raise InvalidArgument(f"{name} must be a comma list or a list of strings, not {value!r}")
    return tuple(value)


def check_writable_dir(path: str | os.PathLike, flag: str) -> None:
    """Raise :class:`InvalidArgument` unless directory ``path`` exists or can be created.

    Walks up to the nearest existing ancestor: it must be a writable directory (a file on
    the way, e.g. ``/etc/passwd/x``, or a read-only folder fails here, before any work).
    A missing folder is created to test it and removed again, so a check that fails later
    (a broken ``--plugin``) leaves nothing behind.
    """
    p = Path(path).absolute()
    if p.exists():
        if not p.is_dir():
            raise InvalidArgument(f"{flag} {path}: exists and is not a directory")
        if not os.access(p, os.W_OK):
            raise InvalidArgument(f"{flag} {path}: directory is not writable")
        return
    parent = p.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise InvalidArgument(f"{flag} {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK):
        raise InvalidArgument(f"{flag} {path}: cannot create it ({parent} is not writable)")
    made = [p, *[a for a in p.parents if a != parent and parent in a.parents]]
    try:  # os.access says yes to root on /proc: only creating it tells (a fresh user's test)
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidArgument(f"{flag} {path}: cannot create it ({e.strerror})") from None
    for a in made:  # innermost first; each is empty (just made)
        a.rmdir()


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read a TOML config file: the ``[run]`` table if present, else the top level; keys
    with ``-`` are given as ``_``. Raises :class:`InvalidArgument` (one line) for a file
    that is missing, not UTF-8 or not TOML, or whose ``run`` is not a table."""
    return _load_config(path)[0]


def _load_config(path: str | os.PathLike) -> tuple[dict[str, Any], str]:
    """:func:`load_config`'s table, and the prefix that names a key of it in a message:
    ``[run] `` for the ``[run]`` table, else nothing."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidArgument(f"config file {str(p)!r} does not exist") from None
    except IsADirectoryError:
        raise InvalidArgument(f"config file {str(p)!r} is a directory") from None
    except UnicodeDecodeError:
        raise InvalidArgument(f"config file {str(p)!r} is not UTF-8 text") from None
    except OSError as e:
        raise InvalidArgument(f"config file {str(p)!r}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise InvalidArgument(f"config file {str(p)!r} is not valid TOML: {e}") from None
    table = data.get("run", data)
    if not isinstance(table, dict):
        raise InvalidArgument(f"config file {str(p)!r}: 'run' must be a table, not {table!r}")
    other = [k for k in data if k != "run"] if "run" in data else []
    if other:  # ignored before, while a lone misspelled [runn] was an error (fresh user 33's B4)
        what = f"table [{other[0]}]" if isinstance(data[other[0]], dict) else f"key {other[0]!r}"
        raise InvalidArgument(f"config file {str(p)!r}: {what} beside [run] is not read "
                              "(the options go in [run])")
    if "run" not in data:  # a lone misspelled [runn]: a table, not an option (fresh user 36's B7)
        names = {f.name for f in dataclasses.fields(CampaignOptions)}
        stray = [k for k, v in data.items() if isinstance(v, dict) and k.replace("-", "_") not in names]
        if stray:
            raise InvalidArgument(f"config file {str(p)!r}: table [{stray[0]}] is not read "
                                  "(the options go in [run])")
    spelled: dict[str, str] = {}
    for k in table:
        name = k.replace("-", "_")
        if name in spelled:  # the last one won, unchecked (fresh user 34's B4)
            raise InvalidArgument(f"config file {str(p)!r}: {spelled[name]!r} and {k!r} are "
                                  "one option: give it once")
        spelled[name] = k
    return {k.replace("-", "_"): v for k, v in table.items()}, "[run] " * ("run" in data)


def _check_overridden(overridden: dict[str, Any], where: str) -> None:
    """Raise :class:`InvalidArgument` for a config value of the wrong type that a flag
    replaces: the flag wins, but the file stays wrong until the flag is dropped (fresh user
    31's B5: ``corpus = 5`` with ``--corpus DIR`` ran a whole campaign). ``overridden``:
    those values by option name; ``where`` is the file and section as errors name them.
    Their ranges are :meth:`CampaignOptions.validate`'s (:attr:`CampaignOptions.overridden`)."""
    for k, v in overridden.items():
        bad = _wrong_type(k, v) if k in _TYPES else None
        if bad is not None:
            raise InvalidArgument(f"{where}{k} {bad}")


def merge_options(flags: dict[str, Any], config: str | None = None) -> CampaignOptions:
    """Defaults < config file < flags (only flags the user gave, i.e. not None).

    Every value of the config file is checked, also one a flag replaces: its type here, the
    rest in :meth:`CampaignOptions.validate` (:attr:`CampaignOptions.overridden`)."""
    merged: dict[str, Any] = {}
    table, section = _load_config(config) if config else ({}, "")
    if config:
        merged.update(table)
        if merged.get("programs") is not None and merged.get("time") is not None:
            raise InvalidArgument(
                f"config file {config!r} sets both 'time' and 'programs': give one budget"
            )
    merged.update({k: v for k, v in flags.items() if v is not None})
    # A budget given on the command line replaces the config's other kind of budget.
    if flags.get("programs") is not None and flags.get("time") is None:
        merged.pop("time", None)
    if flags.get("time") is not None and flags.get("programs") is None:
        merged.pop("programs", None)
    # the options whose value is the file's (no flag replaced it): errors name the file
    where = f"config file {str(config)!r}: {section}"
    from_config = {k: f"{where}{k}" for k in table if flags.get(k) is None and k in merged}
    # a replaced value was never checked: a bad file passed whenever a flag covered it
    # (fresh user 31's B5; later seed = -4 with --seed 1, time = "abc" with --programs 1)
    names = {f.name for f in dataclasses.fields(CampaignOptions)}
    overridden = {k: v for k, v in table.items() if k not in from_config and k in names}
    for k in ("pipelines", "fail_on", "plugins"):  # named by file and key too (fresh user 31's B4)
        if k in merged:
            # a flag's error names the flag, as the user typed it (fresh user 34)
            merged[k] = _split(merged[k], from_config.get(k, "--" + k.replace("_", "-")))
        if k in overridden:
            overridden[k] = _split(overridden[k], f"{where}{k}")
    _check_overridden(overridden, where)
    unknown = sorted(k for k in table if k not in names)  # no flag has their names
    if unknown:  # fresh user 24: the bare option name did not say where it was written
        raise InvalidArgument(f"{from_config[unknown[0]]} is not a campaign option")
    try:
        opts = CampaignOptions.from_json(merged)
    except TypeError as e:
        raise InvalidArgument(f"bad campaign option: {e}") from None
    opts.from_config = from_config
    opts.overridden = {k: (f"{where}{k}", v) for k, v in overridden.items()}
    return opts


#: Options a ``run --resume`` command line may change: they bound or pace the rest of the
#: campaign (or its exit code and report), never which programs run or how they are judged.
RESUMABLE = ("programs", "time", "workers", "timeout", "recycle", "fail_on", "report")


def _unchanged(value: Any, saved: Any) -> bool:
    """Whether a resume flag's ``value`` is the saved option ``saved``: equal, or (a folder
    such as ``corpus``) the same path once resolved."""
    if value == saved:
        return True
    if isinstance(value, str) and isinstance(saved, str) and value and saved:
        return Path(value).resolve() == Path(saved).resolve()
    return False


def resume_options(saved: CampaignOptions, flags: dict[str, Any]) -> CampaignOptions:
    """The options of a resumed campaign: ``saved`` (its options.json) under ``flags``.

    ``flags`` maps option names to the values given on the resume command line (None: not
    given). A budget flag (``programs`` or ``time``) replaces the saved budget, both kinds:
    the budget is the whole campaign's, so ``time`` counts the seconds spent before the
    interruption and ``programs`` the programs already done. The other :data:`RESUMABLE`
    options replace theirs; any other flag may repeat its saved value. Raises
    :class:`InvalidArgument` (one line) for any other flag that changes it:
    changing the seed, pipelines, device, corpus, shrinking or generator options halfway
    would make the campaign's programs and findings a mix of two campaigns.
    """
    merged = saved.to_json()
    # a flag that repeats the saved value changes nothing (fresh user 22: the same --corpus)
    given = {k: v for k, v in flags.items() if v is not None
             and (k in RESUMABLE or not _unchanged(v, merged.get(k)))}
    fixed = sorted(set(given) - set(RESUMABLE))
    if fixed:
        name = {"shrink": "no-shrink", "plugins": "plugin",
                "share_trace": "share-trace", "shrink_once": "no-shrink-once",
                "known_first": "no-known-first"}.get(fixed[0], fixed[0])
        raise InvalidArgument(
            f"--{name.replace('_', '-')} cannot change on --resume (the campaign keeps its "
            f"options.json; only {', '.join('--' + r.replace('_', '-') for r in RESUMABLE)}, "
            "besides --state, which names the campaign)"
        )
    if "programs" in given or "time" in given:
        merged["programs"] = merged["time"] = None
    merged.update(given)
    if "fail_on" in given:
        merged["fail_on"] = _split(given["fail_on"], "--fail-on")
    try:
        return CampaignOptions.from_json(merged)
    except TypeError as e:
        raise InvalidArgument(f"bad campaign option: {e}") from None
