"""Rendering: Program -> readable Python source, and loading it as a function.

:func:`render_module` gives a module with one statement per line, stable names (the IR's
own) and a map from statement index to source line, so that FX nodes can be traced back
to statements through their ``stack_trace``. :func:`load_function` writes the module to a
file (``@triton.jit`` and ``inspect`` need real source files) and imports it.

Module-level definitions an op needs (custom ops, Triton kernels) come from
:mod:`aliasfuzz.fuzz.preludes`: imported from there in-process (registered once), or
inlined by :func:`render_inputs`' sibling :mod:`aliasfuzz.fuzz.repro` for standalone repros.
"""

from __future__ import annotations

from dataclasses import dataclass

from aliasfuzz.fuzz._files import load_module, workdir
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.ops._build import lit

__all__ = [
    "CAPTURE_TRITON",
    "FUNCTION_NAME",
    "load_module",
    "workdir",
    "Rendered",
    "load_function",
    "render_inputs",
    "render_module",
    "render_statement",
]

FUNCTION_NAME = "program"
_INDENT = "    "


@dataclass(frozen=True)
class Rendered:
    """Rendered source of a program and the source lines (1-based, inclusive) of each
    statement: a control-flow statement spans several lines."""

    source: str
    statement_spans: tuple[tuple[int, int], ...]
    preludes: tuple[str, ...]

    @property
    def statement_lines(self) -> tuple[int, ...]:
        """The first source line of each statement."""
        return tuple(first for first, _ in self.statement_spans)

    def statement_at(self, lineno: int) -> int | None:
        """The statement index rendered at ``lineno`` (any of its lines), or None."""
        for i, (first, last) in enumerate(self.statement_spans):
            if first <= lineno <= last:
                return i
        return None


#: How a Triton launch is spelled for a tracer outside Dynamo: ``make_fx`` captures a user
#: kernel only through ``torch.library.wrap_triton`` (``torch/_library/triton.py``); in eager
#: the wrapper calls ``kernel[grid](...)`` itself, so both spellings mean the same program.
CAPTURE_TRITON = "torch.library.wrap_triton"


def render_statement(op: Op, *, capture_triton: bool = False) -> str:
    """One statement as a line of Python (no indentation).

    With ``capture_triton`` a user Triton launch ``k[grid](...)`` is spelled
    ``torch.library.wrap_triton(k)[grid](...)`` (:data:`CAPTURE_TRITON`), the form
    ``make_fx`` traces; other statements are unchanged."""
    from aliasfuzz.fuzz.ops import OpKind

    d = lookup(op.op)
    text = d.render(op.args, op.params)
    if capture_triton and d.kind is OpKind.TRITON:
        kernel, rest = text.split("[", 1)
        text = f"{CAPTURE_TRITON}({kernel})[{rest}"
    if d.statement or not op.out:
        return text
    return f"{', '.join(op.out)}{',' if len(op.out) == 1 and d.n_out != 1 else ''} = {text}"


def preludes_of(program: Program) -> tuple[str, ...]:
    """Names of module-level definitions the program's ops need, in first-use order."""
    seen: dict[str, None] = {}
    for op in program.body:
        for name in lookup(op.op).prelude:
            seen.setdefault(name, None)
    return tuple(seen)


def _signature(program: Program) -> str:
    parts = []
    for t in program.inputs:
        ann = "Optional[torch.Tensor]" if t.optional else "torch.Tensor"
        parts.append(f"{t.name}: {ann}")
    return ", ".join(parts)


def render_function_lines(
    program: Program, name: str = FUNCTION_NAME, *, capture_triton: bool = False
) -> list[str]:
    """The ``def`` of the program, one item per statement (a control-flow item holds
    several source lines); ``capture_triton`` as in :func:`render_statement`."""
    lines = [f"def {name}({_signature(program)}):"]
    for op in program.body:
        # multi-line statements (control flow) carry their own absolute indentation
        lines.append(_INDENT + render_statement(op, capture_triton=capture_triton))
    if program.outputs:
        outs = ", ".join(program.outputs)
        lines.append(f"{_INDENT}return ({outs},)")
    else:
        lines.append(f"{_INDENT}return None")
    return lines


def render_module(
    program: Program, *, inline_preludes: bool = False, capture_triton: bool = False
) -> Rendered:
    """The program as a Python module defining ``program(...)``.

    With ``inline_preludes`` the custom-op and kernel definitions are pasted in (for a
    standalone file); otherwise they are imported from :mod:`aliasfuzz.fuzz.preludes`.
    ``capture_triton`` spells launches for ``make_fx`` (:func:`render_statement`).
    """
    from aliasfuzz.fuzz import preludes as _preludes

    needed = preludes_of(program)
    head = ["from typing import Optional", "", "import torch", ""]
    if needed:
        if inline_preludes:
            head += _preludes.sources(needed)
        else:
            head.append(f"from aliasfuzz.fuzz.preludes import {', '.join(needed)}  # noqa: F401")
        head.append("")
    head.append("")
    fn = render_function_lines(program, capture_triton=capture_triton)
    spans, line = [], len(head) + 2  # line number of the first statement (1-based)
    for op in program.body:
        n = render_statement(op, capture_triton=capture_triton).count("\n") + 1
        spans.append((line, line + n - 1))
        line += n
    return Rendered(source="\n".join([*head, *fn, ""]), statement_spans=tuple(spans), preludes=needed)


def render_inputs(program: Program, *, device: str = "cpu", name: str = "make_inputs") -> str:
    """Source of a function that builds the program's inputs exactly as :mod:`eager` does."""
    from aliasfuzz.fuzz.eager import storage_expr

    lines = [f"def {name}(device={device!r}):"]
    for s in program.storages:
        lines.append(f"{_INDENT}{s.name} = {storage_expr(s)}.to(device)")
    names = []
    for t in program.inputs:
        if t.none:
            lines.append(f"{_INDENT}{t.name} = None")
        else:
            expr = f"torch.as_strided({t.storage}, {lit(t.shape)}, {lit(t.stride)}, {t.offset})"
            if t.requires_grad:
                expr += ".detach().requires_grad_()"
            lines.append(f"{_INDENT}{t.name} = {expr}")
        names.append(t.name)
    lines.append(f"{_INDENT}return ({', '.join(names)}{',' if len(names) == 1 else ''})")
    return "\n".join(lines) + "\n"


def load_function(program: Program, *, capture_triton: bool = False):
    """Render ``program`` and return ``(function, Rendered)``; the function is fresh per call.

    ``capture_triton`` spells Triton launches through ``torch.library.wrap_triton`` (for
    the pipelines that trace outside Dynamo, :func:`render_statement`). Its time counts as
    the ``render`` stage of :mod:`aliasfuzz.fuzz.costs`."""
    from aliasfuzz.fuzz import costs

    with costs.stage("render"):
        rendered = render_module(program, capture_triton=capture_triton)
        module = load_module(rendered.source)
        return getattr(module, FUNCTION_NAME), rendered
