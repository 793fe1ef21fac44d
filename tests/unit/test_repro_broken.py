"""A repro that breaks says so by its exit status (fresh user 31's B3).

A ``repro.py`` exits 1 while the bug shows and 0 once fixed; an exception outside its
check (an API that moved, a value finding whose compiled call now raises) exits 125, git
bisect's "skip", so a script bisecting torch with it does not read "the repro broke" as
"the bug is still there". Each script here runs in a subprocess under a wrapper that
breaks one torch API before the repro's own code runs (``runpy``), the way a later torch
would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from aliasfuzz.campaign.corpus import load_entry
from aliasfuzz.campaign.repro import render_repro
from tests.common.repro_cases import CASES, ROOT, meta_v2
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


#: a ``sitecustomize`` that moves one piece of torch (``SIM``) before any repro code runs,
#: in the repro's own children too (fresh user 32's simulations of a later torch)
SITE = """
import os
sim = os.environ.get("SIM")
if sim == "compile_raise":
    import torch
    def moved(*args, **kwargs):
        raise AttributeError("torch.compile moved in this torch")
    torch.compile = moved
elif sim == "reinplace_rebound":  # post_grad_passes calls the pass by another name
    import torch._inductor.fx_passes.post_grad as pg
    pg._reinplace_pass_v2 = pg.reinplace_inplaceable_ops
    c = pg.post_grad_passes.__code__
    pg.post_grad_passes.__code__ = c.replace(co_names=tuple(
        "_reinplace_pass_v2" if n == "reinplace_inplaceable_ops" else n for n in c.co_names))
elif sim == "metrics_logger_renamed":  # compile_fx logs its byte count under another name
    import logging
    import torch._inductor.compile_fx as cf
    cf.inductor_metrics_log = logging.getLogger("torch._inductor.compile_fx.__inductor_metrics_v2")
"""


def _simulated(text: str, tmp_path: Path, sim: str | None, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "site" / "sitecustomize.py").write_text(SITE)
    script = tmp_path / "repro.py"
    script.write_text(text)
    environ = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), **env}
    if sim:
        environ["SIM"] = sim
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, env=environ)


def _corpus_repro(name: str) -> str:
    e = load_entry(ROOT / "corpus" / name)
    return render_repro(e.program, e.meta)


def test_a_crash_repro_whose_torch_compile_moved_exits_125(tmp_path):
    # the compiled callable is built outside the check: only calling it is the bug
    text = _corpus_repro("crash-functionalization-20c8219dcd")
    r = _simulated(text, tmp_path, "compile_raise")
    assert r.returncode == 125, r.stdout + r.stderr
    assert "torch.compile moved in this torch" in r.stderr
    assert _simulated(text, tmp_path, None).returncode == 1


def test_a_copies_harness_whose_pass_was_not_watched_exits_125(tmp_path):
    text = _corpus_repro("missed-reinplace-reinplace-28782ce57a")
    r = _simulated(text, tmp_path, "reinplace_rebound")
    assert r.returncode == 125, r.stdout + r.stderr
    assert "the reinplace pass never ran" in r.stdout


def test_a_witness_repro_whose_byte_count_is_not_logged_exits_125(tmp_path):
    program, meta = witness_entry()
    r = _simulated(render_repro(program, meta), tmp_path, "metrics_logger_renamed")
    assert r.returncode == 125, r.stdout + r.stderr
    assert "counted 0 bytes for f" in r.stdout


def test_a_compile_crash_repro_ignores_suppress_errors(tmp_path):
    # TORCHDYNAMO_SUPPRESS_ERRORS=1 would fall back to eager: "fixed" where the bug shows
    text = _corpus_repro("crash-lowering-baa68a8925")
    assert "torch._dynamo.config.suppress_errors = False" in text
    r = _simulated(text, tmp_path, None, TORCHDYNAMO_SUPPRESS_ERRORS="1")
    assert r.returncode == 1, r.stdout + r.stderr


def test_a_python_without_torch_exits_2_not_skip(tmp_path):
    # fresh user 34's B5: run by a python without torch, every repro exited 125, so the
    # bisect recipe (corpus/README.md) skipped every commit instead of stopping on the
    # set-up mistake; a torch that imports but breaks still exits 125
    program, meta, _ = CASES["ok-aot_eager"]
    script = tmp_path / "repro.py"
    script.write_text(render_repro(program, meta))
    for stub, code in (("None", 2), ("__import__('types').ModuleType('torch')", 125)):
        run = (f"import runpy, sys; sys.modules['torch'] = {stub}; "
               "runpy.run_path(sys.argv[1], run_name='__main__')")
        r = subprocess.run([sys.executable, "-c", run, str(script)], capture_output=True,
                           text=True, timeout=600, cwd=tmp_path)
        assert r.returncode == code, (stub, r.stdout + r.stderr)
        if code == 2:
            # fresh user 52's B4: one line saying what to do, not a traceback; and the
            # docstring, which travels into bisect scripts, lists the status
            assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr
            assert "has no torch: run this repro with the python of the torch under test" in r.stderr
    assert "2 no torch" in " ".join(script.read_text().split('"""')[1].split())
