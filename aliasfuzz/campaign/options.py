"""Campaign options: one dataclass, merged from defaults, a TOML config file and flags.

Precedence (lowest first): the defaults below, the ``[run]`` table of ``--config FILE``
(or the top level of that file), then the command-line flags the user actually gave.
Every check raises :class:`~aliasfuzz.errors.InvalidArgument` with a one-line message.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = ["DEFAULT_PIPELINES", "CampaignOptions", "merge_options"]

#: The README's main job: the CPU pipelines that decide where to write in place.
DEFAULT_PIPELINES = ("inductor-reinplace", "inductor", "aot_eager", "fx-reinplace", "torchscript")


def _default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


@dataclass
class CampaignOptions:
    """Everything one campaign needs; JSON-able (it is saved in the campaign directory).

    Budget: ``programs`` (a count) or ``time`` (seconds of wall clock); with neither, 120 s.
    ``timeout`` is seconds per program and pipeline; ``recycle`` is the number of tasks a
    worker runs before it is replaced (bounds memory growth). ``fail_on`` names the
    verdicts whose new findings make ``aliasfuzz run`` exit 1. ``shrink_budget`` is the
    number of re-executions a finding's minimization may spend. ``plugins`` are pass
    plugin files (:mod:`aliasfuzz.plugins`) every worker imports before its first program.
    """

    programs: int | None = None
    time: float | None = None
    seed: int = 0
    pipelines: tuple[str, ...] = DEFAULT_PIPELINES
    device: str = "cpu"
    workers: int = field(default_factory=_default_workers)
    timeout: float = 120.0
    recycle: int = 200
    fail_on: tuple[str, ...] = ("miscompile",)
    corpus: str = "corpus"
    report: str | None = "reports"
    state: str = ".aliasfuzz"
    shrink: bool = True
    shrink_budget: int = 40
    max_statements: int = 8
    pipeline_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    plugins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.pipelines = tuple(self.pipelines)
        self.plugins = tuple(self.plugins)
        self.fail_on = tuple(self.fail_on)
        if self.programs is None and self.time is None:
            self.time = 120.0

    def validate(self, known_pipelines: set[str] | None = None) -> CampaignOptions:
        """Check every field; raise :class:`InvalidArgument` on the first bad one."""
        from aliasfuzz.oracle.verdict import Verdict

        if self.programs is not None and self.programs < 1:
            raise InvalidArgument("--programs must be >= 1")
        if self.time is not None and self.time <= 0:
            raise InvalidArgument("--time must be > 0 seconds")
        if self.workers < 1:
            raise InvalidArgument("--workers must be >= 1")
        if self.timeout <= 0:
            raise InvalidArgument("--timeout must be > 0 seconds")
        if self.recycle < 1:
            raise InvalidArgument("--recycle must be >= 1")
        if self.device not in ("cpu", "cuda"):
            raise InvalidArgument(f"unknown device {self.device!r} (cpu or cuda)")
        if not self.pipelines:
            raise InvalidArgument("--pipelines is empty")
        if known_pipelines is not None:
            bad = [p for p in self.pipelines if p not in known_pipelines]
            if bad:
                raise InvalidArgument(
                    f"unknown pipeline {bad[0]!r} (known: {', '.join(sorted(known_pipelines))})"
                )
        for v in self.fail_on:
            if not Verdict.parse(v).is_finding:
                raise InvalidArgument(f"--fail-on {v!r} is not a finding verdict")
        return self

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
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


def _split(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    return tuple(value)


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read a TOML config file: the ``[run]`` table if present, else the top level."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise InvalidArgument(f"config file {str(p)!r} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise InvalidArgument(f"config file {str(p)!r} is not valid TOML: {e}") from None
    table = data.get("run", data)
    return {k.replace("-", "_"): v for k, v in table.items()}


def merge_options(flags: dict[str, Any], config: str | None = None) -> CampaignOptions:
    """Defaults < config file < flags (only flags the user gave, i.e. not None)."""
    merged: dict[str, Any] = {}
    if config:
        merged.update(load_config(config))
    merged.update({k: v for k, v in flags.items() if v is not None})
    if "pipelines" in merged:
        merged["pipelines"] = _split(merged["pipelines"])
    if "fail_on" in merged:
        merged["fail_on"] = _split(merged["fail_on"])
    # A budget given on the command line replaces the config's other kind of budget.
    if flags.get("programs") is not None and flags.get("time") is None:
        merged.pop("time", None)
    if flags.get("time") is not None and flags.get("programs") is None:
        merged.pop("programs", None)
    try:
        return CampaignOptions.from_json(merged)
    except TypeError as e:
        raise InvalidArgument(f"bad campaign option: {e}") from None
