"""Pipeline adapters: run a program through a system under test and capture its decisions.

Each adapter runs ``(Program, inputs, device, options) -> Execution``; see
:func:`run_pipeline`, :data:`PIPELINES` and ``passes/README.md``.
"""

from aliasfuzz.passes.execution import Decision, Execution, Failure
from aliasfuzz.passes.pipelines import PIPELINES, PipelineOptions, run_function, run_pipeline

__all__ = [
    "PIPELINES",
    "Decision",
    "Execution",
    "Failure",
    "PipelineOptions",
    "run_function",
    "run_pipeline",
]
