"""No crash entry of the repository's corpus ends in aliasfuzz's own code: a crash is
PyTorch's (the system under test), never the harness's (issue 17: an entry whose worker
died inside the oracle's byte enumeration had been filed as a PyTorch crash).

The stack of an entry is read from its ``diff``: faulthandler's dump of a worker that died
(innermost frame of the dying thread), or the last frame of a Python traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aliasfuzz.campaign.worker import innermost_frame
from tests.common.corpus_entries import committed_entries, entry_params

ROOT = Path(__file__).resolve().parents[2]


def _crashes(entries: list[Path]) -> list[Path]:
    return [p for p in entries
            if json.loads((p / "meta.json").read_text())["expected"]["verdict"] == "crash"]


#: committed crash entries, and those of a local campaign git does not track (skipped)
CRASHES, UNTRACKED_CRASHES = (_crashes(e) for e in committed_entries(ROOT / "corpus"))
#: aliasfuzz's own code: the package's folders in this checkout.
OWN = tuple(str(ROOT / d) for d in ("aliasfuzz", "fuzz", "passes", "oracle"))
_PY_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+, in ', re.M)


def _innermost(diff: str) -> str | None:
    frame = innermost_frame(diff)
    if frame is not None:
        return frame[0]
    frames = _PY_FRAME.findall(diff.split("Traceback (most recent call last):")[-1])
    return frames[-1] if "Traceback (most recent call last):" in diff and frames else None


@pytest.mark.parametrize("entry", entry_params(CRASHES, UNTRACKED_CRASHES))
def test_a_crash_entry_does_not_end_in_aliasfuzz(entry):
    meta = json.loads((entry / "meta.json").read_text())
    where = _innermost(meta.get("diff", ""))
    assert where is None or not where.startswith(OWN), (entry.name, where)


def test_the_stack_reader_finds_both_kinds_of_stack():
    dump = 'Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n'
    dump += f'  File "{ROOT}/oracle/footprints.py", line 9 in _bytes\n'
    assert _innermost(dump).startswith(OWN)
    tb = 'Traceback (most recent call last):\n  File "/x/torch/a.py", line 3, in f\n'
    tb += f'  File "{ROOT}/passes/spy.py", line 4, in g\nValueError: x\n'
    assert _innermost(tb).startswith(OWN)
    assert _innermost("RuntimeError: shape '[3]' is invalid for input of size 1") is None
