"""``repro.py`` of a case file's finding (``aliasfuzz check --repro DIR``).

A case file is Python, not a :class:`~aliasfuzz.fuzz.ir.Program`, so its repro takes the
file's own code (without its docstring) as the definitions, ``f = program``, its
``setup()`` when it has one, and its ``inputs()``; the rest is the corpus's renderer
(:func:`aliasfuzz.campaign.repro.render_plan`): the same way of compiling per pipeline, the
same comparison per check, the same exit codes (1 the bug shows, 0 fixed, 3 no GPU). A
cost finding with a witness spelling cannot be shown this way (its repro spells the
witness inside ``f``'s generated source), nor can a pipeline that exists only inside
aliasfuzz: :func:`render_case_repro` returns None for those.
"""

from __future__ import annotations

import ast
from dataclasses import asdict
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.repro import Plan, _harness_reason, _way, is_witness, render_plan
from aliasfuzz.fuzz.ir import Program

__all__ = ["case_meta", "render_case_repro"]

#: What a case repro's docstring says instead of a blamed stage.
NOT_CUT = "aliasfuzz check judges a case file whole, without cutting its pipeline stage by stage"


def case_meta(case: Any, row: dict[str, Any]) -> dict[str, Any]:
    """The corpus-entry ``meta`` the renderer reads, for ``row`` (a row of
    :func:`aliasfuzz.oracle.cases.judge_case`) of the loaded ``case``."""
    from aliasfuzz.campaign.corpus import versions
    from aliasfuzz.passes.pipelines import PipelineOptions

    pipeline, verdict, check = row["pipeline"], row["verdict"], row.get("check")
    options = PipelineOptions.for_case(pipeline, case.pipeline_options)
    return {
        "id": f"aliasfuzz check {case.path.name}",
        "root": {"stage": f"unblamed:{pipeline}", "verdict": verdict, "check": check,
                 "evidence": []},
        "expected": {"pipeline": pipeline, "verdict": verdict, "check": check},
        "explanation": row.get("explanation") or "",
        "blame_reason": NOT_CUT,
        "versions": versions(),
        "device": case.device,
        "pipeline_options": asdict(options),
    }


def _parts(source: str) -> tuple[dict[str, Any], tuple[str, ...], list[str]]:
    """``(parts, names of program's parameters, __future__ import lines)`` of a case file's
    source: its code without the module docstring as the definitions."""
    tree = ast.parse(source)
    lines = source.splitlines()
    drop: set[int] = set()
    future = []
    for k, node in enumerate(tree.body):
        doc = k == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if doc or is_future:
            drop.update(range(node.lineno - 1, node.end_lineno))
        if is_future:
            future.append(ast.get_source_segment(source, node))
    # the repro imports torch itself, before its settings
    code = [x for k, x in enumerate(lines) if k not in drop and x.strip() != "import torch"]
    while code and not code[0].strip():
        code.pop(0)
    program = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "program")
    names = tuple(a.arg for a in program.args.posonlyargs + program.args.args)
    setup = any(isinstance(n, ast.FunctionDef) and n.name == "setup" for n in tree.body)
    function = ["", "f = program  # the case file's program"]
    if setup:  # the case's custom ops, registered as aliasfuzz check did before judging it
        function.append("setup()")
    parts = {"imports": [], "definitions": code, "function": function, "inputs": [],
             "optional": False, "triton": False}
    return parts, names, future


def render_case_repro(path: str | Path, case: Any, row: dict[str, Any]) -> str | None:
    """The text of ``repro.py`` for ``row`` of case file ``path`` (loaded as ``case``), or
    None when the corpus's renderer has no way to show it from a case file (see the module
    docstring)."""
    meta = case_meta(case, row)
    pipeline, verdict = row["pipeline"], row["verdict"]
    _, mode, backend = _way(pipeline, None)
    if mode == "none":
        return None
    harness = "" if mode == "fx" and verdict == "missed-reinplace" else \
        _harness_reason(mode, verdict, None)
    p = Plan(Program((), (), ()), pipeline, verdict, row.get("check"), mode, backend,
             str(case.device).startswith("cuda"), True, harness, meta["pipeline_options"],
             meta["explanation"], True)
    if is_witness(p):
        return None
    source = Path(path).read_text(encoding="utf-8")
    parts, names, future = _parts(source)
    text = render_plan(p, meta, parts, names)
    if future:  # a __future__ import must come first, right after the docstring
        doc, sep, rest = text.partition('"""\n')
        text = doc + sep + "\n".join(future) + "\n" + rest
    return text
