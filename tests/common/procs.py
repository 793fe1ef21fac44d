"""Process helpers for tests that kill a parent and watch its children."""

from __future__ import annotations

from pathlib import Path

__all__ = ["alive"]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead and waiting for its reaper, does not); Linux
    ``/proc`` only."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"
