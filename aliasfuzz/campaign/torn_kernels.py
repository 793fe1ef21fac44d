"""Torn kernel builds in Inductor's kernel cache: a harness artifact, never a finding.

Inductor builds each C++ kernel straight into its cache folder (``torch/_inductor/
codecache.py``: ``CppCodeCache.load_async`` runs ``_worker_compile_cpp``, which holds
``<cache>/locks/<key>.lock`` and builds ``<cache>/<key[1:3]>/<key>.main.so`` only when that
file does not exist yet). A build killed mid-write (``kill -9`` of a campaign, a worker
killed for its timeout) leaves a truncated ``.so`` that every later compile of the same
kernel source loads: ``ImportError: ... .so: file too short``. Fresh user 55 (B1) saw it
filed as a new ``crash`` root cause after ``kill -9`` and ``--resume``, whose repro (fresh
caches) exits 0.

Two guards: a campaign removes torn builds from its shared kernel cache before its
workers start (:func:`remove_torn`, :class:`aliasfuzz.campaign.pool.Pool`), and a crash
whose error names a torn build under the cache is run again once that build is removed
(:func:`remove_named`, :func:`aliasfuzz.campaign._judge.evaluate`). A build is removed only
under its own lock, so a build another process is writing is left alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["is_torn", "remove_named", "remove_torn"]

#: An ELF file's first bytes; a shared object shorter than its header is torn too.
_ELF = b"\x7fELF"
_ELF_HEADER = 64
#: The loader's words for a truncated shared object, with its path.
_TORN_ERROR = re.compile(r"(/[^\s:'\"]+\.so): (?:file too short|invalid ELF header)")


def is_torn(so: Path) -> bool:
    """Whether shared object ``so`` is a torn build: shorter than an ELF header or not
    starting with ELF's magic bytes (False for a file that is gone)."""
    try:
        with open(so, "rb") as f:
            head = f.read(_ELF_HEADER)
    except OSError:
        return False
    return len(head) < _ELF_HEADER or not head.startswith(_ELF)


def _remove_unlocked(cache: Path, so: Path) -> bool:
    """Remove torn build ``so`` while holding Inductor's lock of its key (the file name up
    to its first dot); False when another process holds the lock (a build in flight) or the
    file is whole by then."""
    from filelock import FileLock, Timeout

    key = so.name.split(".", 1)[0]
    lock = cache / "locks" / f"{key}.lock"
    if not lock.parent.is_dir():
        lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock), timeout=0):
            if not is_torn(so):
                return False
            so.unlink(missing_ok=True)
            return True
    except Timeout:
        return False


def remove_torn(cache: Path) -> list[Path]:
    """Remove every torn ``.so`` under kernel cache folder ``cache`` whose lock is free; the
    paths removed (none when the folder does not exist)."""
    if not cache.is_dir():
        return []
    return [so for so in sorted(cache.rglob("*.so"))
            if so.is_file() and is_torn(so) and _remove_unlocked(cache, so)]


def _cache_dir() -> Path:
    """This process's Inductor cache folder (``TORCHINDUCTOR_CACHE_DIR`` or Inductor's
    default, ``torch/_inductor/runtime/cache_dir_utils.py``)."""
    env = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if env:
        return Path(env).resolve()
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return Path(cache_dir()).resolve()


def remove_named(error: str, cache: Path | None = None) -> list[Path]:
    """Remove the torn builds that ``error`` (a crash's explanation) names as a truncated
    shared object under kernel cache ``cache`` (default: this process's,
    :func:`_cache_dir`); the paths removed. A path outside the cache is never touched."""
    named = _TORN_ERROR.findall(error)
    if not named:
        return []
    cache = (cache or _cache_dir()).resolve()
    out = []
    for text in dict.fromkeys(named):
        so = Path(text).resolve()
        if so.is_relative_to(cache) and is_torn(so) and _remove_unlocked(cache, so):
            out.append(so)
    return out
