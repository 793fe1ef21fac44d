"""What one pipeline run produced: :class:`Execution`, :class:`Decision`, :class:`Failure`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["STAGES", "Decision", "Execution", "Failure"]

#: Where a pipeline can fail, in order (``backward``: the backward of the shared loss,
#: :mod:`aliasfuzz.fuzz.grads`, which compiles and runs the backward graph).
STAGES = ("trace", "compile", "run", "backward")


@dataclass(frozen=True)
class Decision:
    """What a pass did with one reinplacing candidate (a node and one mutated argument).

    ``kind`` is one of ``auto_functionalized``, ``auto_functionalized_v2``,
    ``triton_kernel_wrapper_functional``, ``index_put``, ``scatter``, ``copy_epilogue``,
    ``inplaceable`` (an aten op with an in-place form, for ``torch.fx.passes.reinplace``),
    ``foreach`` (an inplaceable ``_foreach_*`` op).
    ``arg`` names the mutated argument (the schema name, or ``_all_bases[i]`` for v2).
    ``reinplaced`` is None when the capture could not read the decision (``reason`` says
    why). ``nbytes`` is the size of that argument in bytes when static. ``statement`` is the
    program statement the node came from (from its stack trace), or None if unknown;
    ``line`` is the source line in the program's file; ``arg_node`` names the FX node of
    the mutated argument in the graph before the pass.
    """

    node: str
    kind: str
    arg: str
    reinplaced: bool | None
    nbytes: int | None = None
    statement: int | None = None
    target: str = ""
    reason: str = ""
    line: int | None = None
    arg_node: str = ""

    @property
    def captured(self) -> bool:
        """Whether the decision was read (False marks a gap in the capture)."""
        return self.reinplaced is not None


@dataclass(frozen=True)
class Failure:
    """A failure of the system under test, tagged with its stage (see :data:`STAGES`)."""

    stage: str
    error_type: str
    message: str
    #: qualified class names along the exception's MRO and its ``__cause__`` chain (what
    #: :mod:`aliasfuzz.oracle.refusals` matches exception types against); empty when unknown
    kinds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"unknown stage {self.stage!r}")

    @classmethod
    def of(cls, stage: str, e: BaseException, limit: int = 4000) -> Failure:
        """The failure ``e`` raised at ``stage``: its type name, its message (the first
        ``limit`` characters) and ``kinds``. Raises ValueError for an unknown stage."""
        kinds: list[str] = []
        seen: set[int] = set()
        cur: BaseException | None = e
        while cur is not None and id(cur) not in seen:  # explicit wrapping only (raise from)
            seen.add(id(cur))
            kinds += [f"{k.__module__}.{k.__qualname__}" for k in type(cur).__mro__]
            cur = cur.__cause__
        return cls(stage, type(e).__name__, str(e)[:limit], tuple(dict.fromkeys(kinds)))


@dataclass
class Execution:
    """One run of a program through one pipeline.

    ``outputs`` and ``inputs_after`` are what the compiled callable returned and the
    inputs after its call; ``aliases`` is :func:`aliasfuzz.fuzz.eager.alias_map` of them.
    ``graph_before`` is the functional FX graph the pass saw (FakeTensor metadata in
    ``node.meta["val"]``), ``graph_after`` the graph after it. ``timings`` are seconds per
    stage. ``failure`` is set when the pipeline failed; the other fields hold what it had.
    ``extra`` holds adapter-specific data: ``pass_calls`` (how often Inductor's reinplace
    pass ran) and ``graphs_before`` (every graph the pass saw, when a graph break gives
    several; ``graph_before`` is the first). ``cost`` is the generated code's cost (full
    Inductor pipelines only; :mod:`aliasfuzz.passes.cost`).
    """

    pipeline: str
    device: str
    outputs: tuple[Any, ...] = ()
    inputs_after: tuple[Any, ...] = ()
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    graph_before: Any = None
    graph_after: Any = None
    decisions: list[Decision] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    failure: Failure | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: full ``inductor`` pipelines: the :class:`aliasfuzz.passes.cost.GraphCost` of each graph
    #: Inductor lowered for this run (bytes moved per call, kernels, temporaries), in order
    cost: list[Any] = field(default_factory=list)
    grads: tuple[Any, ...] | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None
