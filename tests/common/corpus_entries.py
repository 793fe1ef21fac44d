"""The repository corpus' entries as tests see them: committed ones are tests, local ones not.

``aliasfuzz run`` writes its new findings into the checkout's own ``corpus/`` (README,
quick start: the campaign first, then the tests). A fresh finding of a time-boxed local
campaign may be flaky or depend on the machine; it becomes part of the suite when it is
committed. So the tests that iterate ``corpus/`` check every entry git tracks (a committed
entry that stops reproducing fails them, locally and in CI) and skip, with the reason, the
entries git does not track. Without git (an exported tree), every entry counts as committed.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from aliasfuzz.campaign import corpus as store

__all__ = ["UNTRACKED", "committed_copy", "committed_entries", "entry_params", "tracked_entry_names"]

#: the skip reason of an entry git does not track
UNTRACKED = ("{name}: not tracked by git (a local campaign's new finding, not yet part of the "
             "suite; commit it to test it, `aliasfuzz replay corpus/{name}` to check it)")


def tracked_entry_names(corpus: Path) -> set[str] | None:
    """Names of ``corpus``'s entry folders that hold a file git tracks; None when ``corpus``
    is not inside a git work tree (or git is missing)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(corpus), "ls-files", "-z", "--", "."],
            capture_output=True, check=True, timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {Path(p).parts[0] for p in out.decode().split("\0") if p and len(Path(p).parts) > 1}


def committed_entries(corpus: Path) -> tuple[list[Path], list[Path]]:
    """``(committed, untracked)`` entry folders of ``corpus`` (``store.list_entries`` order)."""
    entries = store.list_entries(corpus)
    tracked = tracked_entry_names(corpus)
    if tracked is None:
        return list(entries), []
    return [p for p in entries if p.name in tracked], [p for p in entries if p.name not in tracked]


def entry_params(entries: list[Path], untracked: list[Path]) -> list:
    """``pytest.param`` per entry, ids the folder names; untracked ones skipped with
    :data:`UNTRACKED`."""
    skip = [pytest.param(p, id=p.name, marks=pytest.mark.skip(reason=UNTRACKED.format(name=p.name)))
            for p in untracked]
    return [pytest.param(p, id=p.name) for p in entries] + skip


def committed_copy(entry: Path, dest: Path) -> Path:
    """A copy of corpus entry folder ``entry`` as git's HEAD holds it, in ``dest/<name>``:
    a campaign of the quick start adds sightings to the working tree's committed entries
    (README), which a test of what the rebuild makes of an entry must not read (fresh user
    49's B1). Without git, the working tree's copy."""
    out = dest / entry.name
    try:
        top = subprocess.run(["git", "-C", str(entry), "rev-parse", "--show-toplevel"],
                             capture_output=True, check=True, text=True, timeout=60).stdout.strip()
        rel = entry.resolve().relative_to(Path(top).resolve())
        blob = subprocess.run(["git", "-C", top, "archive", "HEAD", "--", str(rel)],
                              capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError, ValueError):
        shutil.copytree(entry, out)
        return out
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(dest / ".git-archive", filter="data")
    shutil.move(str(dest / ".git-archive" / rel), out)
    return out
