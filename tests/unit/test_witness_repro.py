"""The repro.py of a cost finding with a witness spelling (check ``witness``): it compiles
``f`` and ``f_witness`` and exits 1 only while Inductor's own byte count for ``f`` is the
larger (:func:`aliasfuzz.campaign.repro.witness_repro`). Data: the graph-split finding of
the fifteenth campaign (seed 20261210), a custom op copying an input's in-place update
back into it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from aliasfuzz.campaign.repro import render_repro, witness_function
from aliasfuzz.fuzz.ir import Program

ENTRY = Path(__file__).resolve().parents[1] / "data" / "witness" / "missed-reinplace-unblamed-inductor-a1b3b904b1"


def _entry() -> tuple[Program, dict]:
    return (Program.loads((ENTRY / "program.json").read_text()),
            json.loads((ENTRY / "meta.json").read_text()))


def _run(text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "repro.py"
    script.write_text(text)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)


def test_witness_repro_exits_1_while_f_moves_more_bytes(tmp_path):
    program, meta = _entry()
    text = render_repro(program, meta)
    assert text.startswith('"""[inductor] torch.compile(backend="inductor") moves more bytes '
                           "than an equivalent spelling")
    assert "def f_witness(x1):" in text and "torch._dynamo.graph_break()  # the witness" in text
    assert "reinplace_inplaceable_ops" not in text  # not the kept-copy harness
    r = _run(text, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    said = re.search(r"f moves (\d+) bytes per call in (\d+) kernel\(s\), f_witness (\d+) in (\d+)",
                     r.stdout)
    assert said, r.stdout
    assert int(said[1]) > int(said[3]) and int(said[2]) >= 1 and int(said[4]) >= 1


def _explained(explanation: str) -> tuple[Program, dict]:
    """The entry with another witness explanation, in its meta and every sighting."""
    program, meta = _entry()
    meta = dict(meta, explanation=explanation)
    meta["hits"] = [dict(h, explanation=explanation) for h in meta["hits"]]
    return program, meta


def test_witness_repro_exits_0_when_the_spelling_saves_nothing(tmp_path):
    # a graph break after the last statement changes no graph: "fixed" as far as it goes
    program, meta = _explained("witness graph-split: `torch.ops.mylib.copy_into(v0, x1)` "
                               "spelled `...` gives eager's values")
    r = _run(render_repro(program, meta), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_witness_repro_exits_4_when_the_spellings_no_longer_agree(tmp_path):
    # a "witness" that changes the values: neither shown nor fixed, so neither 1 nor 0
    program, meta = _explained("witness augmented-setitem: `v0 = x1.add_(1.0)` spelled "
                               "`v0 = x1.add_(2.0)` gives eager's values")
    r = _run(render_repro(program, meta), tmp_path)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "no longer gives eager's values" in r.stdout


def test_witness_function_spells_each_rule_or_gives_up():
    f = ["def f(x):", "    x[0:2] += 0.5", "    return None"]
    rule, lines = witness_function(f, "witness augmented-setitem: `x[0:2] += 0.5` spelled "
                                      "`x[0:2].add_(0.5)` gives eager's values")
    assert rule == "augmented-setitem"
    assert lines == ["def f_witness(x):", "    x[0:2].add_(0.5)  # the witness: was x[0:2] += 0.5",
                     "    return None"]
    assert witness_function(f, "witness graph-split: `y.add_(1)` spelled `...` gives") is None
    assert witness_function(f, "select_scatter (input): forced in place") is None


def test_witness_function_reads_the_custom_op_namespace_as_the_repro_renders_it():
    # eighteenth hand check, a61e62ccb5: the explanation names torch.ops.aliasfuzz.add_one_,
    # the repro's f calls torch.ops.mylib.add_one_; the witness was not found and the repro
    # fell back to the kept-copy harness, which could never say fixed
    f = ["def f(x0):", "    torch.ops.mylib.add_one_(x0)", "    return x0.sum()"]
    rule, lines = witness_function(f, "witness graph-split: `torch.ops.aliasfuzz.add_one_(x0)` "
                                      "spelled `...` gives eager's values")
    assert rule == "graph-split" and lines[2].strip().startswith("torch._dynamo.graph_break()")


def test_a_witness_finding_whose_spelling_is_not_in_f_has_no_standalone_repro(tmp_path):
    program, meta = _explained("witness graph-split: `y = nowhere(x)` spelled `...` gives eager's values")
    text = render_repro(program, meta)
    assert "No standalone repro" in text and "reinplace_inplaceable_ops" not in text
    r = _run(text, tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr


TEMPS = ENTRY.parent / "missed-reinplace-unblamed-inductor-eaede8e418"


def test_a_witness_leaner_by_its_temporaries_has_a_repro_that_reads_them(tmp_path):
    # audit 56 (eaede8e418): Inductor's count charged the field read through an index
    # whole (800 vs 544 bytes) where the kernels moved 288 vs 240; the claim the repro
    # decides on is the 48-byte temporary the generated call allocates
    program = Program.loads((TEMPS / "program.json").read_text())
    meta = json.loads((TEMPS / "meta.json").read_text())
    text = render_repro(program, meta)
    assert text.startswith('"""[inductor] torch.compile(backend="inductor") allocates a temporary '
                           "that an equivalent spelling does not"), text[:200]
    assert "def code_temporaries(source" in text and "run_and_get_code" in text
    r = _run(text, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    said = re.search(r"temporaries: f \[(.*)\] \((\d+) bytes\), f_witness \[(.*)\] \((\d+) bytes\)",
                     r.stdout)
    assert said and int(said[2]) > int(said[4]), r.stdout
    assert re.search(r"Inductor's own count: f [1-9]\d* bytes per call", r.stdout), r.stdout


def test_a_temporaries_repro_exits_0_when_the_witness_allocates_as_much(tmp_path):
    # the same claim about a spelling that saves nothing: a graph break after the store
    program = Program.loads((TEMPS / "program.json").read_text())
    meta = json.loads((TEMPS / "meta.json").read_text())
    said = meta["explanation"].replace("`w1 = torch.mul(g, 0.5, out=work)` spelled",
                                       "`field[rows] = work` spelled")
    meta = dict(meta, explanation=said, hits=[dict(h, explanation=said) for h in meta["hits"]])
    text = render_repro(program, meta)
    assert "field[rows] = work\n    torch._dynamo.graph_break()  # the witness" in text
    r = _run(text, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_dynamic_witness_s_repro_compiles_with_dynamic_shapes_and_reads_past_a_custom_op(tmp_path):
    # audit 57 (dfe6def6b6): found with dynamic=True, the repro compiled static, and read
    # the buffer handed to a custom op as a returned output: it exited 0 ("fixed")
    entry = ENTRY.parent / "missed-reinplace-unblamed-inductor-dfe6def6b6"
    program = Program.loads((entry / "program.json").read_text())
    meta = json.loads((entry / "meta.json").read_text())
    text = render_repro(program, meta)
    assert 'torch.compile(fn, backend="inductor", dynamic=True)' in text
    assert "Found with dynamic shapes: the script compiles f and f_witness with dynamic=True." in text
    r = _run(text, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "temporaries: f [('buf0', 384)] (384 bytes), f_witness [] (0 bytes)" in r.stdout, r.stdout
