"""What a finding says is read as written (fresh user 32's B7).

A headline cut mid-word ("requiring a storage s...") read as a typo; TorchScript's
interpreter error printed its type twice ("RuntimeError: RuntimeError: ..."); a crash
repro's last line was Dynamo's closing advice (``Set TORCHDYNAMO_VERBOSE=1 ...``), not the
error.
"""

from __future__ import annotations

import subprocess
import sys

from aliasfuzz.campaign._repro_words import first_line, title
from aliasfuzz.campaign.repro import render_repro
from aliasfuzz.errors import clip, message, one_line
from passes.ts_calls import _one_line
from tests.common.repro_cases import CASES, meta_v2

STORAGE = ("RuntimeError: setStorage: sizes [4, 3, 3], strides [4, 1, 28], storage offset 9, "
           "and itemsize 4 requiring a storage size of 320 are out of bounds")
ADVICE = ("\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this "
          "especially if you're reporting a bug to PyTorch). For even more developer context, "
          'set TORCH_LOGS="+dynamo"\n')


def test_a_headline_is_cut_between_words():
    cut = clip(STORAGE, 100)
    assert len(cut) <= 100 and cut.endswith("...")
    assert STORAGE.startswith(cut[:-3])
    assert STORAGE[len(cut) - 3] == " ", cut  # the next character starts a new word
    assert clip(STORAGE, len(STORAGE)) == STORAGE
    assert clip("x" * 50, 20) == "x" * 17 + "..."  # one long word: cut where it stands
    assert first_line(STORAGE, 60).endswith("strides [4...")


def test_an_error_type_is_said_once():
    assert message(RuntimeError("RuntimeError: Autograd not support dtype: Bool")) == (
        "Autograd not support dtype: Bool")
    assert one_line(RuntimeError("RuntimeError: boom")) == "RuntimeError: boom"
    assert one_line(ValueError("RuntimeError: boom")) == "ValueError: RuntimeError: boom"
    ts = RuntimeError("The following operation failed in the TorchScript interpreter.\n"
                      "Traceback of TorchScript (most recent call last):\n  v3 = ...\n"
                      "RuntimeError: Autograd not support dtype: Bool")
    said = _one_line(ts)
    assert said.startswith("RuntimeError: Autograd not support dtype: Bool\n"), said
    # an entry written before: its stored explanation still says it twice
    program, _, _ = CASES["ok-aot_eager"]
    meta = meta_v2(program, "torchscript", "crash", "torchscript", None,
                   explanation="legacy call 0 (optimized) raised RuntimeError: RuntimeError: "
                               "Autograd not support dtype: Bool")
    assert "RuntimeError: RuntimeError" not in title(meta)
    assert "raised RuntimeError: Autograd not support" in title(meta)


#: run ``repro.py`` with a ``torch.compile`` whose compiled call raises as Dynamo does
RAISING = """
import runpy, sys, torch
def compile(f, **kwargs):
    def call(*args):
        raise RuntimeError({text!r})
    return call
torch.compile = compile
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def test_a_crash_repro_ends_with_the_error_not_dynamos_advice(tmp_path):
    program, _, _ = CASES["ok-aot_eager"]
    meta = meta_v2(program, "aot_eager", "crash", "crash", "functionalization",
                   explanation="RuntimeError: boom")
    script = tmp_path / "repro.py"
    script.write_text(render_repro(program, meta))
    # a long message ends with Dynamo's source carets (fresh user 34's B6)
    carets = "boom: it broke\n\nfrom user code:\n    v1 = v0.addcmul_(v0, v0)\n         ^^^^^^^^^^"
    r = subprocess.run([sys.executable, "-c", RAISING.format(text=carets + ADVICE),
                        str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last == "eager ran, the compiled call raised RuntimeError: boom: it broke", r.stderr
    assert "from user code:" in r.stderr and "TORCHDYNAMO_VERBOSE" not in r.stderr  # all said
