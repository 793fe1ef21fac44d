"""Per-process files for generated source: ``@triton.jit`` and ``inspect`` need real files."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

_WORKDIR: Path | None = None


def workdir() -> Path:
    """This process's directory for rendered sources (``ALIASFUZZ_WORKDIR`` sets the root)."""
    global _WORKDIR
    if _WORKDIR is None:
        base = os.environ.get("ALIASFUZZ_WORKDIR")
        root = Path(base) if base else Path(tempfile.gettempdir()) / f"aliasfuzz-{os.getuid()}"
        _WORKDIR = root / f"src-{os.getpid()}"
        _WORKDIR.mkdir(parents=True, exist_ok=True)
    return _WORKDIR


def load_module(source: str, tag: str = "program") -> ModuleType:
    """Write ``source`` to a file named by its hash and import it as a fresh module."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    mod_name = f"_aliasfuzz_{tag}_{digest}"
    path = workdir() / f"{mod_name}.py"
    if not path.exists():
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(source)
        tmp.replace(path)
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module
