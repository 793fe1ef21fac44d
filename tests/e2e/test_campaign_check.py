"""``aliasfuzz check`` on the shared seed cases: every ``expect`` line must hold.

Two cases run by default on aot_eager (fast); the full set, all pipelines, is ``slow``.
"""

from __future__ import annotations

import pytest

from aliasfuzz.cli import main
from tests.common.cases import CASES

ALL = sorted(CASES.glob("b*.py")) if CASES.is_dir() else []
needs_cases = pytest.mark.skipif(not ALL, reason="shared cases folder not present")


@needs_cases
@pytest.mark.parametrize(
    "name, expected",
    [
        ("b07_mutation_through_eval_dropout", "miscompile"),
        ("b01_clone_dropped_custom_op", "ok"),
    ],
)
def test_check_default_cases_on_aot_eager(name, expected, capsys):
    rc = main(["check", str(CASES / f"{name}.py"), "--pipelines", "aot_eager"])
    out = capsys.readouterr().out
    assert out.startswith(f"aot_eager: {expected} (as expected)"), out
    assert rc == 0


@needs_cases
def test_check_exits_1_when_expect_is_contradicted(tmp_path, capsys):
    src = (CASES / "b07_mutation_through_eval_dropout.py").read_text()
    lie = tmp_path / "lie.py"
    lie.write_text(src.replace("aot_eager: miscompile", "aot_eager: ok", 1))
    assert main(["check", str(lie), "--pipelines", "aot_eager"]) == 1
    assert "CONTRADICTS expect: ok" in capsys.readouterr().out


def test_check_rejects_a_file_without_expect(tmp_path, capsys):
    f = tmp_path / "x.py"
    f.write_text('"""no expectations here"""\ndef program(x):\n    return x\n')
    assert main(["check", str(f)]) == 2
    assert "expect" in capsys.readouterr().err


@pytest.mark.slow
@needs_cases
@pytest.mark.parametrize("case", ALL, ids=[p.stem for p in ALL])
def test_check_every_shared_case(case, capsys):
    rc = main(["check", str(case)])
    assert rc == 0, capsys.readouterr().out


def test_check_of_a_case_that_hangs_is_a_one_line_error(tmp_path):
    import subprocess
    import sys

    case = tmp_path / "hangs.py"
    case.write_text(
        '"""Hangs at import.\n\nexpect:\n  aot_eager: ok\n"""\nimport time\n\nimport torch\n\n'
        "time.sleep(1000)\n\n\ndef program(x):\n    return x + 1\n\n\n"
        "def inputs():\n    return (torch.ones(2),)\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "aliasfuzz.cli", "check", str(case), "--timeout", "3"],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 2, r
    assert r.stderr.strip().splitlines() == [
        f"aliasfuzz: error: check of {case} did not finish within 3 s "
        "(a hang at import or in a pipeline)"
    ]
    bad = subprocess.run(
        [sys.executable, "-m", "aliasfuzz.cli", "check", str(case), "--timeout", "nan"],
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2 and "--timeout" in bad.stderr
