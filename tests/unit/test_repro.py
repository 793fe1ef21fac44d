"""Generated ``repro.py`` files reproduce their finding with torch alone (issue 5).

Each script is rendered by :func:`aliasfuzz.campaign.repro.render_repro` into a temp dir
and run with this interpreter in a subprocess (all at once, to keep the runtime low).
Findings are corpus entries whose replay reproduces; the ``ok`` and ``REINPLACED``
programs are hand-built here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from aliasfuzz.campaign.repro import _failing_executors, render_repro
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
#: former corpus entries that are no longer findings (a rule rejects them, see the README
#: there); their repro.py still shows the raw difference, which exercises DIFFERS / RAISES
NOT_FINDINGS = Path(__file__).resolve().parents[1] / "data" / "not_findings"

#: corpus entry -> (exit status, last-line word) its repro.py must give
ENTRIES = {
    "miscompile-torchscript-749ab41471": (1, "DIFFERS"),
    "miscompile-torchscript-c50e2a5151": (1, "DIFFERS"),
    "crash-torchscript-6d6a4a6b4c": (1, "RAISES"),
    "miscompile-inductor-reinplace-3494a7ca5f": (1, "DIFFERS"),
    "miscompile-fx-reinplace-47f5c75915": (1, "DIFFERS"),
    "missed-reinplace-inductor-reinplace-f17266de0d": (1, "STILL COPIED"),
    # b15's pattern through a generated kernel: launched natively, so it needs a GPU
    "miscompile-aot_eager-e60bdbfb27": (
        (1, "DIFFERS") if torch.cuda.is_available() else (3, "CANNOT RUN HERE")
    ),
}


def _ok_program() -> Program:
    # y = x.clone(); y.add_(1): nothing aliases an input, every pipeline agrees with eager
    return Program(
        (StorageSpec("s0", 6),),
        (TensorSpec("x0", "s0", (3, 2), (2, 1)),),
        (Op("clone", ("x0",), {}, ("v0",)), Op("add_.Scalar", ("v0",), {"other": 1.0}, ())),
        ("v0",),
    )


def _reinplaced_program() -> Program:
    # index_put on a fresh clone: the pass turns it into index_put_ (no copy left)
    return Program(
        (StorageSpec("s0", 6), StorageSpec("s1", 4), StorageSpec("s2", 2, dtype="int64")),
        (
            TensorSpec("x0", "s0", (3, 2), (2, 1)),
            TensorSpec("x1", "s1", (2, 2), (2, 1)),
            TensorSpec("x2", "s2", (2,), (1,)),
        ),
        (
            Op("clone", ("x0",), {}, ("v0",)),
            Op("index_put_.Tensor", ("v0", "x1", "x2"), {}, ("v1",)),
        ),
        ("v0",),
    )


def _meta(pipeline: str, verdict: str) -> dict:
    return {"id": "hand-built", "expected": {"pipeline": pipeline, "verdict": verdict}}


def _cases() -> dict[str, tuple[Program, dict, tuple[int, str]]]:
    cases = {}
    for name, want in ENTRIES.items():
        d = CORPUS / name if (CORPUS / name).is_dir() else NOT_FINDINGS / name
        meta = json.loads((d / "meta.json").read_text())
        cases[name] = (Program.loads((d / "program.json").read_text()), meta, want)
    for pipeline in ("torchscript", "inductor-reinplace", "fx-reinplace"):
        cases[f"ok-{pipeline}"] = (_ok_program(), _meta(pipeline, "ok"), (0, "SAME"))
    # executor choice: the legacy executor from pipeline_options; the simple executor
    # (ok on c50e2a5151) falling back to the executors the explanation's tail names
    prog, meta, _ = cases["miscompile-torchscript-749ab41471"]
    legacy = {**meta, "pipeline_options": {"torchscript": {"profiling_executor": False}}}
    cases["ts-legacy"] = (prog, legacy, (1, "DIFFERS"))
    prog, meta, _ = cases["miscompile-torchscript-c50e2a5151"]
    simple = {**meta, "pipeline_options": {"torchscript": {"optimize": False}}}
    cases["ts-simple-then-tail"] = (prog, simple, (1, "DIFFERS"))
    cases["reinplaced"] = (
        _reinplaced_program(),
        _meta("inductor-reinplace", "missed-reinplace"),
        (0, "REINPLACED"),
    )
    return cases


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, tuple[tuple[int, str], int, str]]:
    root = tmp_path_factory.mktemp("repro")
    procs = {}
    for name, (program, meta, want) in _cases().items():
        path = root / name / "repro.py"
        path.parent.mkdir()
        path.write_text(render_repro(program, meta))
        procs[name] = (
            want,
            subprocess.Popen(
                [sys.executable, str(path)],
                cwd=path.parent,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            ),
        )
    out = {}
    for name, (want, p) in procs.items():
        text, _ = p.communicate(timeout=300)
        out[name] = (want, p.returncode, text)
    return out


@pytest.mark.parametrize(
    "name",
    [
        *ENTRIES,
        "ok-torchscript",
        "ok-inductor-reinplace",
        "ok-fx-reinplace",
        "ts-legacy",
        "ts-simple-then-tail",
        "reinplaced",
    ],
)
def test_repro_exits_as_the_verdict_says(results, name):
    (status, word), rc, text = results[name]
    last = text.strip().splitlines()[-1] if text.strip() else ""
    assert rc == status, text[-3000:]
    assert last.startswith(word), text[-3000:]


def test_torchscript_repro_scripts_the_program_instead_of_running_eager_twice(results):
    _, _, text = results["miscompile-torchscript-749ab41471"]
    assert "profiling executor" in text and "call 0: input" in text


def test_executor_comes_from_options_then_from_the_explanation_tail(results):
    _, _, legacy = results["ts-legacy"]
    assert "legacy executor" in legacy and "profiling executor" not in legacy
    _, _, text = results["ts-simple-then-tail"]
    simple_part, _, rest = text.partition("torchscript: profiling executor")
    assert "simple executor" in simple_part and "call" not in simple_part.split("calls", 1)[1]
    assert "profiling call 0: input" in rest


def test_failing_executors_parses_the_explanation_tail():
    tail = "x differs | profiling: miscompile, legacy: crash, simple: ok"
    assert _failing_executors(tail) == ["profiling", "legacy"]
    assert _failing_executors("out0: values differ") == []


def test_crash_repro_says_eager_ran_and_shows_the_exception(results):
    _, _, text = results["crash-torchscript-6d6a4a6b4c"]
    assert "eager ran; TorchScript raised RuntimeError" in text
