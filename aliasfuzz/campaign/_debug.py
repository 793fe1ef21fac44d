"""Debug pipelines: deliberately broken systems under test, for testing the campaign itself.

They exist only when the environment sets ``ALIASFUZZ_DEBUG_PIPELINES=1`` (the tests do),
so users never see them. Each misbehaves only on programs that contain a trigger op kind,
so that shrinking has something to minimize:

* ``debug-segfault``: reads address 0 through ``ctypes`` (SIGSEGV) when the program has an
  in-place or custom op: the worker dies and the campaign must record a ``crash``;
* ``debug-hang``: sleeps forever when the program calls a custom op: a ``timeout``;
* ``debug-miscompile``: claims a ``miscompile`` (check ``values``) when the program has an
  in-place op; fast, for tests of the corpus, dedup, replay and exit codes.

* ``debug-raise``: raises inside the harness (an internal bug, not a verdict): the worker
  reports it as ``internal_error`` and the driver logs it loudly.
* ``debug-cuda-fault``: when the program has an in-place op, poisons the CUDA context with
  a real device-side assert (an out-of-range index on the GPU) when CUDA is available, or
  sets :data:`simulated_fault` without a GPU; the worker must report ``crash`` (check
  ``cuda-error``) and restart.

``ALIASFUZZ_DEBUG_DELAY`` (seconds) slows every debug task down (for kill -9 tests).
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import OpKind, lookup

__all__ = ["DEBUG_PIPELINES", "enabled", "run"]

DEBUG_PIPELINES = (
    "debug-segfault",
    "debug-hang",
    "debug-miscompile",
    "debug-raise",
    "debug-cuda-fault",
)

#: Set by ``debug-cuda-fault`` without a GPU: the fault the worker's probe then reports.
simulated_fault: str | None = None


def enabled() -> bool:
    """Whether the debug pipelines are visible in this process."""
    return os.environ.get("ALIASFUZZ_DEBUG_PIPELINES") == "1"


def _kinds(program: Program) -> set[OpKind]:
    return {lookup(op.op).kind for op in program.body}


def run(program: Program, pipeline: str) -> dict[str, Any]:
    """Misbehave as documented above; otherwise return an ``ok`` outcome."""
    kinds = _kinds(program)
    if pipeline == "debug-segfault" and kinds & {OpKind.INPLACE, OpKind.CUSTOM}:
        ctypes.string_at(0)
    if pipeline == "debug-hang" and OpKind.CUSTOM in kinds:
        while True:
            time.sleep(1)
    if pipeline == "debug-raise":
        raise RuntimeError("debug-raise: a deliberate harness bug")
    if pipeline == "debug-cuda-fault" and OpKind.INPLACE in kinds:
        _cuda_fault()
    time.sleep(float(os.environ.get("ALIASFUZZ_DEBUG_DELAY", "0")))
    if pipeline == "debug-miscompile" and OpKind.INPLACE in kinds:
        return {
            "verdict": "miscompile",
            "check": "values",
            "decision_kinds": ["inplaceable"],
            "explanation": "debug pipeline: any in-place op is 'miscompiled'",
            "diff": "eager: 1.0\ncompiled: 2.0",
        }
    return {"verdict": "ok"}


def _cuda_fault() -> None:
    global simulated_fault
    import torch

    if not torch.cuda.is_available():
        simulated_fault = "simulated: CUDA error: device-side assert triggered"
        return
    x = torch.zeros(2, device="cuda")
    x[torch.tensor([5], device="cuda")] = 1.0  # index out of range: device-side assert
    torch.cuda.synchronize()
