"""``repro.py`` of a case file's finding (``aliasfuzz check --repro``,
:mod:`aliasfuzz.campaign._repro_case`): the case's own code through the corpus's renderer,
valid Python wherever the case puts its ``__future__`` import and ``setup()``; None where
that renderer cannot show the finding from a case file. A gradient finding's repro is run
with and without its fault by ``tests/e2e/test_gradients_judged.py``."""

from __future__ import annotations

import ast
import subprocess
import sys

from aliasfuzz.campaign._repro_case import render_case_repro
from aliasfuzz.oracle.cases import load_case

_CASE = '''"""A case with a setup and a __future__ import.

expect:
  aot_eager: ok
device: cpu
"""
from __future__ import annotations

import torch

SCALE = None


def setup():
    global SCALE
    SCALE = 2.0


def program(x: torch.Tensor, y):
    return x * SCALE + y


def inputs():
    return (torch.ones(3), torch.zeros(3))
'''


def _row(pipeline="aot_eager", verdict="miscompile", check="values"):
    return {"pipeline": pipeline, "verdict": verdict, "check": check, "expected": "ok",
            "explanation": "out0: values differ at [0]: 2.0 in eager, 3.0 compiled"}


def test_a_case_repro_is_the_case_code_compiled_and_compared(tmp_path):
    path = tmp_path / "scaled_case.py"
    path.write_text(_CASE)
    text = render_case_repro(path, load_case(path), _row())
    ast.parse(text)
    doc_end = text.index('"""\n', 3) + 4
    assert text[doc_end:].startswith("from __future__ import annotations\n")
    assert "expect:" not in text  # the case's docstring is replaced by the repro's
    assert text.index("def program(") < text.index("f = program") < text.index("\nsetup()\n")
    assert 'torch.compile(f, backend="aot_eager")' in text
    assert "aliasfuzz check scaled_case.py" in text
    # the program is right: the repro says fixed
    script = tmp_path / "repro.py"
    script.write_text(text)
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "eager and compiled agree: fixed" in r.stdout


def test_no_case_repro_where_the_renderer_has_no_way(tmp_path):
    path = tmp_path / "scaled_case.py"
    path.write_text(_CASE)
    case = load_case(path)
    # a cost claim's witness is spelled inside generated source; a debug pipeline is ours
    assert render_case_repro(path, case, _row("inductor", "missed-reinplace", "witness")) is None
    assert render_case_repro(path, case, _row("debug-miscompile")) is None
