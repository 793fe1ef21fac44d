"""The running torch's release, for expectations that differ between supported releases.

The package supports torch >= 2.11; the CPU CI runs 2.13 and the GPU machine 2.11. A test
whose expectation depends on the release states, next to the condition, the PyTorch source
that differs, so that the condition is dropped with the release.
"""

from __future__ import annotations

import torch
from torch.torch_version import Version

__all__ = ["torch_before"]


def torch_before(release: str) -> bool:
    """Whether the running torch's release (``major.minor``, local and dev parts ignored:
    a 2.13 nightly counts as 2.13) is older than ``release`` (e.g. ``"2.13"``).

    Raises ValueError if ``release`` is not of the form ``"<int>.<int>"``.
    """
    major, minor = (int(p) for p in release.split("."))
    return Version(torch.__version__).release[:2] < (major, minor)
