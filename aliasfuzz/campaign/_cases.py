"""Stand-in case judge for ``aliasfuzz check`` until ``oracle/cases.py`` provides one.

Reads a ``shared/cases``-format file: the docstring's ``expect:`` block and ``device:``
line are parsed as text; the module itself is imported (a case file is a Python program
the user asked to check). Each pipeline runs through :func:`aliasfuzz.passes.pipelines.
run_function` (``torchscript`` through :func:`aliasfuzz.oracle.ts_invariants.
judge_torchscript_case`) ``calls`` times on fresh ``inputs()`` and is compared with eager
(values, inputs after the call, output aliasing; rtol 1e-4, atol 1e-5). ``missed-reinplace``
is read from Inductor's own missed-opportunity counters.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = ["judge_case", "parse_header"]


def parse_header(source: str) -> tuple[dict[str, str], str]:
    """``(expect {pipeline: verdict}, device)`` from a case file's module docstring."""
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError as e:
        raise InvalidArgument(f"case file is not valid Python: {e}") from None
    expect: dict[str, str] = {}
    device, in_expect = "cpu", False
    for line in doc.splitlines():
        if line.strip() == "expect:":
            in_expect = True
            continue
        if in_expect and line.startswith((" ", "\t")) and ":" in line:
            name, verdict = line.split("#")[0].split(":", 1)
            expect[name.strip()] = verdict.strip()
            continue
        in_expect = False
        if line.startswith("device:"):
            device = line.split(":", 1)[1].split("#")[0].strip()
    if not expect:
        raise InvalidArgument("case file has no 'expect:' block in its docstring")
    return expect, device


def _load(path: Path):
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"_aliasfuzz_case_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if hasattr(module, "setup"):
        module.setup()
    for attr in ("program", "inputs"):
        if not callable(getattr(module, attr, None)):
            raise InvalidArgument(f"{path}: case file defines no {attr}()")
    return module


def _options(module, pipeline: str):
    from aliasfuzz.passes.pipelines import PipelineOptions

    cfg = dict(getattr(module, "pipeline_options", {}).get(pipeline, {}))
    v2 = cfg.pop("enable_auto_functionalized_v2", True)
    return PipelineOptions(auto_functionalized_v2=v2, inductor_config=cfg)


def _judge_one(module, pipeline: str) -> tuple[str, str]:
    import inspect

    from aliasfuzz.campaign._fallback import differential
    from aliasfuzz.fuzz.eager import run_callable
    from aliasfuzz.passes.pipelines import run_function

    if pipeline == "torchscript":
        from aliasfuzz.oracle.ts_invariants import judge_torchscript_case

        return judge_torchscript_case(module)
    names = list(inspect.signature(module.program).parameters)

    class _Sig:  # run_callable wants program.inputs names only
        inputs = [type("T", (), {"name": n}) for n in names]

    missed = 0
    for _ in range(int(getattr(module, "calls", 1))):
        ref = run_callable(module.program, _Sig, module.inputs())
        ex = run_function(
            pipeline,
            module.program,
            module.inputs(),
            input_names=names,
            options=_options(module, pipeline),
        )
        if ex.failure is not None:
            f = ex.failure
            return "crash", f"{f.stage}: {f.error_type}: {f.message[:200]}"
        out = differential(names, ref, ex)
        if out["verdict"] != "ok":
            return out["verdict"], f"{out.get('check')}: {out.get('explanation', '')}"
        missed += sum(v for k, v in ex.counters.items() if k.startswith("missed_tensors"))
    if missed:
        return "missed-reinplace", f"Inductor counted {missed} missed reinplacing opportunities"
    return "ok", ""


def judge_case(path: str, pipelines: list[str] | None = None) -> list[dict[str, Any]]:
    """One row ``{pipeline, verdict, expected, explanation}`` per pipeline of the case."""
    p = Path(path)
    if not p.is_file():
        raise InvalidArgument(f"{path}: no such case file")
    expect, device = parse_header(p.read_text())
    module = _load(p)
    rows = []
    for pipeline in pipelines or list(expect):
        if device.startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                rows.append(
                    {
                        "pipeline": pipeline,
                        "verdict": "skipped",
                        "expected": expect.get(pipeline),
                        "explanation": "needs a GPU",
                    }
                )
                continue
        verdict, why = _judge_one(module, pipeline)
        rows.append(
            {
                "pipeline": pipeline,
                "verdict": verdict,
                "expected": expect.get(pipeline),
                "explanation": why,
            }
        )
    return rows
