"""A repro that breaks says so by its exit status (fresh user 31's B3).

A ``repro.py`` exits 1 while the bug shows and 0 once fixed; an exception outside its
check (an API that moved, a value finding whose compiled call now raises) exits 125, git
bisect's "skip", so a script bisecting torch with it does not read "the repro broke" as
"the bug is still there". Each script here runs in a subprocess under a wrapper that
breaks one torch API before the repro's own code runs (``runpy``), the way a later torch
would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from aliasfuzz.campaign.repro import render_repro
from tests.common.repro_cases import CASES, meta_v2
from tests.unit.test_witness_repro import _entry as witness_entry

#: run ``repro.py`` after replacing ``torch.<name>`` with a function that raises
WRAPPER = """
import runpy, sys, torch
def moved(*args, **kwargs):
    raise AttributeError("torch.{name} moved in this torch")
{target} = moved
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def _run(text: str, tmp_path: Path, target: str | None = None) -> subprocess.CompletedProcess:
    script = tmp_path / "repro.py"
    script.write_text(text)
    argv = [sys.executable, str(script)]
    if target:
        argv = [sys.executable, "-c", WRAPPER.format(name=target.split(".", 1)[1], target=target),
                str(script)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=tmp_path)


def test_a_value_repro_whose_compiled_call_raises_exits_125(tmp_path):
    program, meta, _ = CASES["ok-aot_eager"]
    text = render_repro(program, meta)
    assert "125" in text.split('"""')[1]  # the docstring names the code
    assert _run(text, tmp_path).returncode == 0  # the control: eager and aot_eager agree
    r = _run(text, tmp_path, "torch.compile")
    assert r.returncode == 125, r.stdout + r.stderr
    assert "AttributeError: torch.compile moved in this torch" in r.stderr
    assert "eager and compiled agree" not in r.stdout


def test_an_fx_crash_repro_traces_inside_its_check(tmp_path):
    # the trace is the functionalization under test: its exception is the bug (exit 1)
    program, _, _ = CASES["fx-overlapping-inputs"]
    meta = meta_v2(program, "fx-reinplace", "crash", "crash", "functionalization",
                   explanation="RuntimeError: t() expects a tensor with <= 2 dimensions")
    text = render_repro(program, meta)
    body = text.split("\ntry:\n", 1)
    assert len(body) == 2 and "make_fx(torch.func.functionalize(f)" in body[1].split("except")[0], text
    r = _run(text, tmp_path, "torch.func.functionalize")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "eager ran, the compiled call raised AttributeError" in r.stdout + r.stderr


def test_a_witness_repro_that_cannot_compile_exits_125(tmp_path):
    program, meta = witness_entry()
    text = render_repro(program, meta)
    assert "def f_witness(" in text
    r = _run(text, tmp_path, "torch.compile")
    assert r.returncode == 125, r.stdout + r.stderr
    assert "torch.compile moved in this torch" in r.stderr
