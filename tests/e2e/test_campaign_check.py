"""``aliasfuzz check`` on the shared seed cases and on bad case files, each command in a
fresh process: an ``expect`` line that holds exits 0, a contradicted one 1, a bad file or a
hang 2 (one line on stderr). Every case through every pipeline of its ``expect`` block:
``test_check_fresh_process.py``.
"""

from __future__ import annotations

import pytest

from tests.common.cases import CASES
from tests.common.cli import run_cli

needs_cases = pytest.mark.skipif(not CASES.is_dir(), reason="shared cases folder not present")


@needs_cases
@pytest.mark.parametrize(
    "name, expected",
    [
        ("b07_mutation_through_eval_dropout", "miscompile"),
        ("b01_clone_dropped_custom_op", "ok"),
    ],
)
def test_check_default_cases_on_aot_eager(name, expected):
    r = run_cli("check", CASES / f"{name}.py", "--pipelines", "aot_eager")
    assert r.stdout.startswith(f"aot_eager: {expected} (as expected)"), r.stdout + r.stderr
    assert r.returncode == 0


@needs_cases
def test_check_exits_1_when_expect_is_contradicted(tmp_path):
    src = (CASES / "b07_mutation_through_eval_dropout.py").read_text()
    lie = tmp_path / "lie.py"
    lie.write_text(src.replace("aot_eager: miscompile", "aot_eager: ok", 1))
    r = run_cli("check", lie, "--pipelines", "aot_eager")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "CONTRADICTS expect: ok" in r.stdout


def test_check_rejects_a_file_without_expect(tmp_path):
    f = tmp_path / "x.py"
    f.write_text('"""no expectations here"""\ndef program(x):\n    return x\n')
    r = run_cli("check", f)
    assert r.returncode == 2 and "expect" in r.stderr, r.stderr


def test_check_of_a_case_that_hangs_is_a_one_line_error(tmp_path):
    case = tmp_path / "hangs.py"
    case.write_text(
        '"""Hangs at import.\n\nexpect:\n  aot_eager: ok\n"""\nimport time\n\nimport torch\n\n'
        "time.sleep(1000)\n\n\ndef program(x):\n    return x + 1\n\n\n"
        "def inputs():\n    return (torch.ones(2),)\n"
    )
    r = run_cli("check", case, "--timeout", "3", timeout=120)
    assert r.returncode == 2, r
    assert r.stderr.strip().splitlines() == [
        f"aliasfuzz: error: check of {case} did not finish within 3 s "
        "(a hang at import or in a pipeline)"
    ]
    bad = run_cli("check", case, "--timeout", "nan", timeout=120)
    assert bad.returncode == 2 and "--timeout" in bad.stderr
