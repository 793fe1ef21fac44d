"""The program part of a standalone repro: definitions, ``def f``, ``def inputs``, tight.

An upstream repro counts its lines (issue 13: at most ~40 where ``torch.compile``
reproduces), so this renders the minimized program without the harness's padding:

* the custom-op and Triton-kernel definitions the program needs (:mod:`aliasfuzz.fuzz.
  preludes`, the same source text the fuzzer registers) without comment or blank lines,
  their ``import triton`` lines hoisted and deduplicated, and the ``aliasfuzz`` library
  namespace renamed ``mylib`` (the name PyTorch's custom-op docs use), so that nothing
  in the file refers to the fuzzer;
* ``def f(...)``: the statements of :func:`aliasfuzz.fuzz.render.render_statement`
  (annotations only where TorchScript needs them: ``Optional`` inputs);
* ``def inputs()``: fresh inputs with exact sizes, strides and storage offsets, each
  storage built explicitly and viewed with ``torch.as_strided`` (aliased inputs share
  one storage), the same values as :func:`aliasfuzz.fuzz.eager.make_inputs` builds
  (:func:`storage_source` is checked against :func:`aliasfuzz.fuzz.eager.storage_expr`).
"""

from __future__ import annotations

import re
from collections import Counter

from aliasfuzz.fuzz.ir import Program, StorageSpec

__all__ = ["definitions", "function_source", "inputs_source", "storage_source", "uses_triton"]

#: The custom-op namespace of the fuzzer's preludes, and its name in a repro.
_NAMESPACE = re.compile(r"\baliasfuzz\b")
LIBRARY = "mylib"

#: Largest integer a floating dtype holds exactly (``torch.arange`` in that dtype is then
#: exact, as the float64 ``arange`` the fuzzer casts from is).
_EXACT_INT = {"float64": 2**53, "float32": 2**24, "float16": 2**11, "bfloat16": 2**8}
_INT_RANGE = {
    "int64": (-(2**63), 2**63 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int8": (-128, 127),
    "uint8": (0, 255),
}


def _rename(text: str) -> str:
    return _NAMESPACE.sub(LIBRARY, text)


def _arange_is_exact(s: StorageSpec, start: int, step: int) -> bool:
    ends = (start, start + (s.numel - 1) * step) if s.numel else (start, start)
    if s.dtype in _EXACT_INT:
        return max(abs(e) for e in ends) <= _EXACT_INT[s.dtype]
    lo, hi = _INT_RANGE.get(s.dtype, (0, -1))
    return all(lo <= e <= hi for e in ends)


def storage_source(s: StorageSpec) -> str:
    """A short Python expression for storage ``s``'s 1-d CPU tensor, equal (values and
    dtype) to :func:`aliasfuzz.fuzz.eager.storage_expr`'s: ``torch.arange(n, dtype=...)``
    for integral ``arange`` fills within the dtype's exact range, that expression
    otherwise."""
    from aliasfuzz.fuzz.eager import storage_expr

    a = s.init_args
    start, step = a.get("start", 0), a.get("step", 1)
    integral = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, step))
    if s.init == "arange" and s.dtype != "bool" and integral and step and _arange_is_exact(s, start, step):
        dt = f"dtype=torch.{s.dtype}"
        if start == 0 and step == 1:
            return f"torch.arange({s.numel}, {dt})"
        return f"torch.arange({start}, {start + s.numel * step}, {step}, {dt})"
    return storage_expr(s)


def uses_triton(program: Program) -> bool:
    """Whether the program launches user Triton kernels."""
    from aliasfuzz.fuzz.ops import OpKind, lookup

    return any(lookup(op.op).kind is OpKind.TRITON for op in program.body)


def definitions(program: Program) -> tuple[list[str], list[str]]:
    """``(imports, lines)``: the module-level definitions the program needs (custom ops,
    Triton kernels), as source lines without comments or blank lines, and the import
    lines they need (hoisted, deduplicated; ``import torch`` excluded)."""
    from aliasfuzz.fuzz import preludes
    from aliasfuzz.fuzz.render import preludes_of

    imports: list[str] = []
    lines: list[str] = []
    for text in preludes.sources(preludes_of(program)):
        for line in _joined(text.splitlines()):
            bare = line.strip()
            if not bare or bare.startswith("#"):
                continue
            if re.match(r"(import|from) \S+", line):
                if line != "import torch" and line not in imports:
                    imports.append(line)
                continue
            lines.append(_rename(line))
    return imports, lines


def _joined(lines: list[str]) -> list[str]:
    """Lines with bracket continuations joined (``f(\n    a, b\n)`` -> ``f(a, b)``), comment
    lines dropped: the definitions of a repro take as few lines as Python allows."""
    out: list[str] = []
    depth = 0
    for line in lines:
        if line.strip().startswith("#"):
            continue
        code = line.split("  # ")[0].rstrip()
        if depth > 0:
            piece = code.strip()
            sep = "" if out[-1].endswith(("(", "[", "{")) or piece.startswith((")", "]", "}")) else " "
            out[-1] += sep + piece
        else:
            out.append(code)
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        depth = max(depth, 0)
    return out


def function_source(program: Program, name: str = "f", *, capture_triton: bool = False) -> list[str]:
    """``def <name>(...)`` of the program, one list item per line; ``capture_triton`` spells
    Triton launches through ``torch.library.wrap_triton`` as the ``fx`` repro traces them
    (:func:`aliasfuzz.fuzz.render.render_statement`)."""
    from aliasfuzz.fuzz.render import render_function_lines

    params = [f"{t.name}: Optional[torch.Tensor]" if t.optional else t.name for t in program.inputs]
    body = render_function_lines(program, name, capture_triton=capture_triton)[1:]
    return [f"def {name}({', '.join(params)}):", *(_rename(x) for x in "\n".join(body).splitlines())]


def needs_optional(program: Program) -> bool:
    """Whether ``def f`` annotates an input ``Optional`` (``from typing import Optional``)."""
    return any(t.optional for t in program.inputs)


def inputs_source(program: Program, *, cuda: bool = False, width: int = 96) -> list[str]:
    """``def inputs()``: fresh inputs, each storage built explicitly (on ``cuda`` when
    asked) and each input ``torch.as_strided(storage, size, stride, offset)``; the
    inputs are returned inline when the ``return`` line fits ``width`` characters."""
    from aliasfuzz.fuzz.ops._build import lit

    suffix = ".cuda()" if cuda else ""
    per_storage = Counter(t.storage for t in program.inputs if not t.none)
    note = "  # exact sizes, strides, offsets"
    if any(n > 1 for n in per_storage.values()):
        note += "; inputs on one storage alias"
    lines = [f"def inputs():{note}"]
    lines += [f"    {s.name} = {storage_source(s)}{suffix}" for s in program.storages]
    exprs = []
    for t in program.inputs:
        if t.none:
            exprs.append("None")
            continue
        e = f"torch.as_strided({t.storage}, {lit(t.shape)}, {lit(t.stride)}, {t.offset})"
        exprs.append(e + (".detach().requires_grad_()" if t.requires_grad else ""))
    inline = f"    return ({', '.join(exprs)}{',' if len(exprs) == 1 else ''})"
    if len(inline) <= width:
        return [*lines, inline]
    lines += [f"    {t.name} = {e}" for t, e in zip(program.inputs, exprs, strict=True)]
    names = [t.name for t in program.inputs]
    return [*lines, f"    return ({', '.join(names)}{',' if len(names) == 1 else ''})"]
