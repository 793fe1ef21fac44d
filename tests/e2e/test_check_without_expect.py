"""``aliasfuzz check FILE --pipelines P`` judges a case file that has no ``expect:`` block,
as the README's command table says ("each pipeline of its ``expect`` block (or
``--pipelines``)"): a fresh user's B4, refused with "no 'expect:' block". Each line is the
verdict alone (nothing to compare it with), and nothing contradicted exits 0, a finding
included (``check``'s exit codes: :mod:`aliasfuzz.campaign.cli`). Each command in a fresh
process (:func:`tests.common.cli.run_cli`).
"""

from __future__ import annotations

from pathlib import Path

from tests.common.cli import run_cli

ZOO = Path(__file__).resolve().parents[2] / "bench" / "mutants"

_CASE = ("import torch\n\n\ndef program(x):\n    return x\n\n\n"
         "def inputs():\n    return (torch.ones(3),)\n")


def test_a_file_without_expect_is_judged_on_the_pipelines_given(tmp_path):
    f = tmp_path / "identity.py"
    f.write_text(_CASE)
    r = run_cli("check", f, "--pipelines", "aot_eager", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["aot_eager: ok"], r.stdout + r.stderr
    bare = run_cli("check", f, timeout=300)  # no pipelines at all: still the file's error
    assert bare.returncode == 2 and "no 'expect:' block" in bare.stderr, bare.stderr


def test_a_finding_without_expect_is_printed_and_exits_0(tmp_path):
    src = (ZOO / "programs" / "m7_fx_later_uses.py").read_text()
    f = tmp_path / "m7_no_expect.py"
    f.write_text(src.replace("expect:\n  fx-reinplace: ok\n", "", 1))
    assert "expect:" not in f.read_text()
    r = run_cli("check", f, "--plugin", ZOO / "m7_fx_later_uses.py", "--pipelines",
                "fx-reinplace,aot_eager", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and lines[1] == "aot_eager: ok", r.stdout
    assert lines[0].startswith("fx-reinplace: miscompile check=values "), r.stdout
    assert "expect" not in r.stdout, r.stdout


def test_a_bare_tensor_or_a_list_returned_is_judged_on_every_pipeline(tmp_path):
    # fresh user 39's B3: fx-reinplace's graph of a bare-tensor return outputs one node,
    # whose len() raised; B4: a list was one output in eager and two compiled, and comparing
    # the list with a tensor raised on every pipeline
    pipelines = "aot_eager,fx-reinplace,torchscript,inductor"
    for name, body in (("bare", "    x.add_(1)\n    return x * 2\n"),
                       ("listed", "    return [x + 1, x * 2]\n")):
        f = tmp_path / f"{name}.py"
        f.write_text(f"import torch\n\n\ndef program(x):\n{body}\n\n"
                     "def inputs():\n    return (torch.arange(6.0).reshape(2, 3),)\n")
        r = run_cli("check", f, "--pipelines", pipelines, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.splitlines() == [f"{p}: ok" for p in pipelines.split(",")], \
            r.stdout + r.stderr


def test_a_torchscript_finding_line_names_its_check(tmp_path):
    # fresh user 39's B14: "torchscript: miscompile profiling call 0 ..." without the
    # check= every other pipeline's finding line has
    f = tmp_path / "dropout.py"
    f.write_text("import torch\n\n\ndef program(x):\n"
                 "    v = torch.nn.functional.dropout(x, p=0.5, training=False)\n"
                 "    v.add_(1.0)\n    return (x * 1,)\n\n\n"
                 "def inputs():\n    return (torch.arange(3.0),)\n")
    r = run_cli("check", f, "--pipelines", "torchscript", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("torchscript: miscompile check=torchscript "), r.stdout + r.stderr


def test_a_dict_or_nested_return_is_one_line_exit_2(tmp_path):
    # fresh user 40's B1: a dict return raised a traceback in the comparison, exit 1
    for name, body in (("mapping", '    return {"a": x + 1}\n'),
                       ("nested", "    return ((x + 1, x * 2), x)\n")):
        f = tmp_path / f"{name}.py"
        f.write_text(f"import torch\n\n\ndef program(x):\n{body}\n\n"
                     "def inputs():\n    return (torch.ones(2),)\n")
        r = run_cli("check", f, "--pipelines", "aot_eager", timeout=300)
        assert r.returncode == 2, r.stdout + r.stderr
        assert r.stderr.strip().splitlines() == [
            f"aliasfuzz: error: {f}: program returns a {'dict' if name == 'mapping' else 'nested tuple'}"
            "; return None, one value (a tensor or a number), or a flat tuple or list of them"], r.stderr


def test_an_expect_line_without_a_colon_is_named(tmp_path):
    # fresh user 40's B3: "  inductr ok" was read as "case file has no 'expect:' block"
    f = tmp_path / "nocolon.py"
    f.write_text('"""x\n\nexpect:\n  inductor ok\n"""\n' + _CASE)
    r = run_cli("check", f, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip().splitlines() == [
        f"aliasfuzz: error: {f}: case file's expect: block line 'inductor ok' is not "
        "'pipeline: verdict'"], r.stderr


def test_a_non_tensor_input_is_one_line_exit_2(tmp_path):
    # fresh user 40's B2: an int input was reported as a torchscript crash, exit 0
    f = tmp_path / "inint.py"
    f.write_text("import torch\n\n\ndef program(x):\n    return x + 1\n\n\n"
                 "def inputs():\n    return (3,)\n")
    r = run_cli("check", f, "--pipelines", "aot_eager,torchscript", timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip().splitlines() == [
        f"aliasfuzz: error: {f}: inputs()[0] is an int, not a tensor; return a tuple or "
        "list of tensors (None for an omitted optional one)"], r.stderr
    assert r.stdout == "", r.stdout
