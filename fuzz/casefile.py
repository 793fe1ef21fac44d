"""Importing case-format files (``shared/cases/README.md``): once per process, by path.

A case file may register custom ops (``torch.library``) at import time, and PyTorch
refuses a second ``Library(ns, "DEF")`` for one namespace, so every part of aliasfuzz
(pipelines, oracle, tests, CLI) must import a given file through :func:`import_case`,
which keys the module by the file's resolved path and runs its ``setup()`` once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from aliasfuzz.errors import InvalidArgument

__all__ = ["import_case", "module_name"]


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
