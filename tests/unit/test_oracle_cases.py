"""Loading case files: header parsing and the user errors of :mod:`aliasfuzz.oracle.cases`."""

from __future__ import annotations

import pytest

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.oracle.cases import check_inputs, judge_case, load_case, parse_header

HEADER = '''"""Doubles x.

expect:
  inductor: ok        # a comment
  aot_eager: miscompile
device: cpu
report: none
"""
'''


def test_parse_header():
    expect, device, report = parse_header(HEADER)
    assert expect == {"inductor": "ok", "aot_eager": "miscompile"}
    assert device == "cpu" and report == "none"


@pytest.mark.parametrize(
    "text", ['"""no block"""\n', '"""x\n\nexpect:\n  inductor: wrong\n"""\n', "def (:\n"]
)
def test_bad_headers_are_user_errors(text):
    with pytest.raises(InvalidArgument):
        parse_header(text)


def test_missing_file_and_missing_functions(tmp_path):
    with pytest.raises(InvalidArgument):
        load_case(tmp_path / "nope.py")
    f = tmp_path / "c.py"
    f.write_text(HEADER + "import torch\n\ndef program(x):\n    return x * 2\n")
    with pytest.raises(InvalidArgument, match="inputs"):
        load_case(f)


def test_small_case_is_judged(tmp_path):
    f = tmp_path / "twice.py"
    f.write_text(
        HEADER.replace("miscompile", "ok")
        + "import torch\n\ndef program(x):\n    x.mul_(2)\n    return x + 1\n\n"
        "def inputs():\n    return (torch.arange(4.0),)\n"
    )
    rows = judge_case(f, ["aot_eager"])
    assert [(r["pipeline"], r["verdict"], r["expected"]) for r in rows] == [("aot_eager", "ok", "ok")]
    with pytest.raises(InvalidArgument) as e:
        judge_case(f, ["no-such-pipeline"])
    # the whole path and the known names (fresh user 39's B15)
    assert str(e.value).startswith(f"{f}: unknown pipeline 'no-such-pipeline' (known: ")
    assert "inductor-reinplace" in str(e.value) and "torchscript" in str(e.value)


@pytest.mark.parametrize(
    "ret, message",
    [
        ("(torch.ones(2), 3)", "inputs()[1] is an int, not a tensor"),
        ("[torch.ones(2), [torch.ones(2)]]", "inputs()[1] is a list, not a tensor"),
        ("torch.ones(2)", "inputs() returns a Tensor"),
        ("3", "inputs() returns an int"),
    ],
)
def test_non_tensor_inputs_are_user_errors(tmp_path, ret, message):
    # fresh user 40's B2: an int input was judged, and reported as a torchscript crash
    f = tmp_path / "c.py"
    f.write_text(f"import torch\n\ndef program(*xs):\n    return None\n\n"
                 f"def inputs():\n    return {ret}\n")
    with pytest.raises(InvalidArgument) as e:
        check_inputs(load_case(f, expect_block=False))
    assert str(e.value).startswith(f"{f}: {message}; return a tuple or list of tensors")


def test_tensor_and_none_inputs_pass(tmp_path):
    # None is an omitted optional tensor, as the campaign feeds its programs (make_inputs)
    f = tmp_path / "c.py"
    f.write_text("import torch\n\ndef program(x, y):\n    return x\n\n"
                 "def inputs():\n    return [torch.ones(2), None]\n")
    check_inputs(load_case(f, expect_block=False))
