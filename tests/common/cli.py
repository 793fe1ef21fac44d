"""The ``aliasfuzz`` command line as a user runs it: a fresh process per command.

End-to-end tests of the CLI go through :func:`run_cli`, never through ``main()`` in the
test process: a command must set up the process state it needs itself, and a test that
shares the test process would pass on state an earlier test left behind (issue 17:
``aliasfuzz check`` of a Triton program failed in a fresh process while its test passed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["run_cli"]


def run_cli(
    *args: str | Path,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """Run ``python -m aliasfuzz.cli *args`` in a fresh process; its CompletedProcess.

    The child gets this process's environment (so ``monkeypatch.setenv`` reaches it) plus
    ``env``; stdout and stderr are captured as text. Raises ``subprocess.TimeoutExpired``
    after ``timeout`` seconds.
    """
    return subprocess.run(
        [sys.executable, "-m", "aliasfuzz.cli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
