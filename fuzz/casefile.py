"""Case-format files (``shared/cases/README.md``): their header, and importing them once.

A case file may register custom ops (``torch.library``) at import time, and PyTorch
refuses a second ``Library(ns, "DEF")`` for one namespace, so every part of aliasfuzz
(pipelines, oracle, tests, CLI) must import a given file through :func:`import_case`,
which keys the module by the file's resolved path and runs its ``setup()`` once.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = ["Case", "import_case", "load_case", "module_name", "parse_header"]


def module_name(path: str | Path) -> str:
    """The ``sys.modules`` key of a case file: its stem and a digest of its resolved path."""
    p = Path(path).resolve()
    digest = hashlib.sha256(str(p).encode()).hexdigest()[:12]
    return f"_aliasfuzz_case_{p.stem}_{digest}"


def import_case(path: str | Path) -> ModuleType:
    """Import the case file at ``path`` (once per process) and run its ``setup()`` once.

    Raises :class:`InvalidArgument` when the file does not exist. Errors raised by the
    file's own code propagate: the caller decides whether that is the user's mistake.
    """
    p = Path(path).resolve()
    if not p.is_file():
        raise InvalidArgument(f"{path}: no such case file")
    name = module_name(p)
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise InvalidArgument(f"{path}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        if callable(getattr(module, "setup", None)):
            module.setup()
    except BaseException:
        del sys.modules[name]
        raise
    return module


@dataclass
class Case:
    """A loaded case file: its module, expected verdicts, device and options."""

    path: Path
    module: ModuleType
    expect: dict[str, str]
    device: str
    report: str = ""
    calls: int = 1
    pipeline_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def needs_gpu(self) -> bool:
        return self.device.startswith("cuda")


def parse_header(source: str, expect_block: bool = True) -> tuple[dict[str, str], str, str]:
    """``(expect, device, report)`` from a case file's module docstring.

    Raises :class:`InvalidArgument` when the file is not Python or, unless ``expect_block``
    is false (the caller names the pipelines: ``expect`` is then empty), has no ``expect:``
    block (the oracle checks that each verdict exists).
    """
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError as e:
        raise InvalidArgument(f"case file is not valid Python: {e}") from None
    expect: dict[str, str] = {}
    device, report, in_expect = "cpu", "", False
    for line in doc.splitlines():
        if line.strip() == "expect:":
            in_expect = True
            continue
        if in_expect and line.startswith((" ", "\t")) and line.split("#")[0].strip():
            if ":" not in line.split("#")[0]:  # read as "no expect: block" (fresh user 40's B3)
                raise InvalidArgument(f"case file's expect: block line {line.strip()!r} is "
                                      "not 'pipeline: verdict'")
            name, verdict = line.split("#")[0].split(":", 1)
            expect[name.strip()] = verdict.strip()
            continue
        in_expect = False
        key, _, value = line.partition(":")
        if key == "device":
            device = value.split("#")[0].strip()
        elif key == "report":
            report = value.strip()
    if not expect and expect_block:
        raise InvalidArgument("case file has no 'expect:' block in its docstring")
    return expect, device, report


def load_case(path: str | Path, expect_block: bool = True) -> Case:
    """Import a case file (once per process) and read its header and options.

    Raises :class:`InvalidArgument` for a missing file or one not in the case format (one
    without an ``expect:`` block is, with ``expect_block`` false: :func:`parse_header`).
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidArgument(f"{path}: no such case file")
    expect, device, report = parse_header(p.read_text(), expect_block)
    name = module_name(p)
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            # not importable without a GPU in general (device="cuda" at import time); the
            # same stub when a test already imported the file, so callers never see inputs()
            return Case(p, ModuleType(name), expect, device, report)
    module = sys.modules.get(name)
    if module is None:
        module = import_case(p)
    for attr in ("program", "inputs"):
        if not callable(getattr(module, attr, None)):
            raise InvalidArgument(f"{path}: case file defines no {attr}()")
    opts = getattr(module, "pipeline_options", {}) or {}
    if not isinstance(opts, dict):
        raise InvalidArgument(f"{path}: pipeline_options must be a dict")
    calls = getattr(module, "calls", 1)
    if not isinstance(calls, int) or calls < 1:
        raise InvalidArgument(f"{path}: calls must be an int >= 1")
    return Case(p, module, expect, device, report, calls, opts)


