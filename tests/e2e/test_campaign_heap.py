"""A program whose compiled code corrupts the heap, end to end. Where a worker dies of it
is chance (glibc notices at some later malloc or free, or not at all), so the worker's
side is made deterministic: a plugin makes the first task die as glibc does when it finds
the heap corrupted, in aliasfuzz's own code (the twelfth campaign's internal errors). From there everything is real: the campaign confirms the corruption from the
view past its buffer in Inductor's wrapper (oracle.heap, oracle.wrapper_bounds), shrinks it
with each candidate asked the same way, blames a compiled stage, and its repro dies of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.fuzz.ir import Program

DATA = Path(__file__).resolve().parents[1] / "data"

# Loaded in every worker (ALIASFUZZ_PLUGINS): at the first task anywhere the worker aborts
# with glibc's message outside the system under test (before the program runs, so that no
# real corruption decides where it dies); later tasks run as is.
_PLUGIN = """
import os, sys
from aliasfuzz.campaign import _judge

_evaluate = _judge.evaluate

def evaluate(*args, **kwargs):
    try:
        fd = os.open(os.environ["AF_TEST_MARK"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return _evaluate(*args, **kwargs)
    os.close(fd)
    sys.stderr.write("malloc(): unaligned tcache chunk detected\\n")
    sys.stderr.flush()
    os.abort()

_judge.evaluate = evaluate
"""


def test_twelfth_campaign_program_1428_is_a_heap_corruption_finding(tmp_path, monkeypatch):
    program = Program.from_json(json.loads((DATA / "heap" / "s20261206-1428.json").read_text()))
    generate = _judge.generate
    monkeypatch.setattr(_judge, "generate",
                        lambda seed, i, m=8, g=None: program if i == 0 else generate(seed, i, m, g))
    plugin = tmp_path / "late_death.py"
    plugin.write_text(_PLUGIN)
    monkeypatch.setenv("ALIASFUZZ_PLUGINS", str(plugin))
    monkeypatch.setenv("AF_TEST_MARK", str(tmp_path / "died"))
    # mutate=0: program 0 must be the generator's (patched above); seed 1's is a mutant
    # at the default share
    opts = CampaignOptions(programs=1, seed=1, pipelines=("inductor",), workers=1,
                           corpus=str(tmp_path / "corpus"), state=str(tmp_path / "state"),
                           report="none", timeout=300.0,  # the cut's compiles on a loaded box
                           mutate=0.0,
                           shrink_budget=3)  # each candidate: up to 9 child interpreters
    res = run_campaign(opts, show=False)
    assert (tmp_path / "died").exists()  # the worker did die in aliasfuzz
    assert res.status == "done" and res.internal_errors == 0
    (finding,) = res.findings
    # shown by the view past its storage in Inductor's wrapper, as a worker that survives
    # the write sees it too (oracle.wrapper_bounds): one verdict for one bug
    assert (finding["verdict"], finding["check"]) == ("crash", "out-of-bounds")
    entry = tmp_path / "corpus" / finding["id"]
    meta = json.loads((entry / "meta.json").read_text())
    # functionalization, run as the pipeline runs it, already raises setStorage ... out of
    # bounds on this program (a faithful prefix: oracle.blame's rule, fourth audit
    # 69f02e9212), and blame names it when every later cut departs too; a later cut in
    # child interpreters can miss the corruption (glibc does not see every one), and then
    # a compiled stage is named (CI 64 gave functionalization, CI 63 a compiled stage)
    trail = dict((stage, said) for stage, said in meta.get("trail") or [])
    assert finding["stage"] in ("lowering", "scheduler", "codegen:cpp-vectorized") or (
        finding["stage"] == "functionalization"
        and "out of bounds" in trail.get("functionalization", "")), (
        finding, meta.get("trail"), meta.get("blame_reason"))
    # shown by the view past its buffer in Inductor's wrapper (oracle.wrapper_bounds)
    assert "inductor writes out of bounds: Inductor's wrapper made" in meta["explanation"]
    assert "glibc found the heap corrupted" in meta["explanation"]  # the worker's death
    # the confirmation is its replay (1), then candidates asked in child interpreters
    assert meta["shrink_executions"] >= 2, meta
    repro = subprocess.run([sys.executable, str(entry / "repro.py")], capture_output=True,
                           text=True, timeout=600)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    # at the view itself, deterministically (not at glibc's abort, which may not come)
    assert "Inductor's wrapper made reinterpret_tensor(buf" in repro.stderr, repro.stderr
    assert repro.stderr.rstrip().endswith("elements: out of bounds"), repro.stderr
    # the title (after a known bug's name, when blame's root matches one: known.toml)
    head = (entry / "repro.py").read_text().split('"""')[1]
    assert "writes out of bounds where eager does not" in head, head


def test_a_triton_launch_given_dense_strides_is_blamed_on_functionalization(tmp_path, monkeypatch):
    # sixteenth audit: crash-unblamed-inductor-reinplace-953cd464ed was aot_eager's
    # crash-functionalization-adcdc6611e seen through inductor-reinplace, left unblamed.
    # The campaign's program was lost. The auditor's reduction (x.add_(1) on a (2, 4) input
    # of strides (10, 2), then a Triton kernel scaling it through its stride arguments)
    # writes out of bounds once functionalization hands the kernel aten.add's dense result:
    # its outcome varied from run to run (CI: an internal error in a corrupted worker; a
    # rerun: a crash and no fast-path finding). This is the same bug kept in bounds: a
    # (1, 3) input of strides (6, 2); the kernel scales columns 0 and 1 through stride 2,
    # which on the dense (3, 1) result are columns 0 and 2. Both pipelines must blame
    # functionalization, by cutting.
    program = Program.from_json(json.loads((DATA / "heap" / "triton-strides-953cd464ed.json").read_text()))
    generate = _judge.generate
    monkeypatch.setattr(_judge, "generate",
                        lambda seed, i, m=8, g=None: program if i == 0 else generate(seed, i, m, g))
    import torch

    # on a GPU host Triton refuses CPU tensors (the CPU Triton layer is off there): run the
    # same program on CUDA
    device = "cuda" if torch.cuda.is_available() else "cpu"
    opts = CampaignOptions(programs=1, seed=1, pipelines=("aot_eager", "inductor-reinplace"),
                           workers=1, device=device, corpus=str(tmp_path / "corpus"),
                           state=str(tmp_path / "state"), report="none",
                           mutate=0.0)  # program 0 is the patched generator's, not a mutant
    res = run_campaign(opts, show=False)
    assert res.status == "done" and res.internal_errors == 0
    (finding,) = res.findings  # one root cause: the fast path's sighting joins the entry
    assert (finding["pipeline"], finding["verdict"], finding["stage"]) == (
        "aot_eager", "miscompile", "functionalization"), finding
    meta = json.loads((tmp_path / "corpus" / finding["id"] / "meta.json").read_text())
    sightings = {h["pipeline"] for h in meta["hits"]}
    if device == "cpu":  # on the H200 (torch 2.11) the fast path's sighting was not checked
        assert sightings == {"aot_eager", "inductor-reinplace"}, meta["hits"]
