"""The mutant zoo (``bench/mutants``) through ``aliasfuzz check --plugin``, and plugins in workers.

Each mutant's program (``bench/mutants/programs``, case format, ``expect: ... ok``) passes
without the plugin and is flagged with it: the expectation is contradicted (exit 1) with
the verdict the mutant's docstring names.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aliasfuzz import plugins
from aliasfuzz.cli import main

ZOO = Path(__file__).resolve().parents[2] / "bench" / "mutants"

#: mutant -> the verdict it must cause on its program.
EXPECTED = {
    "m1_view_readers": "miscompile",
    "m2_graph_input": "miscompile",
    "m3_no_overlap": "miscompile",
    "m4_two_users": "missed-reinplace",
    "m5_always_clone": "missed-reinplace",
    "m6_triton_readonly": "miscompile",
    "m7_fx_later_uses": "miscompile",
    "m8_ts_profile_left": "invariant",
}


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(plugins.ENV, raising=False)
    yield
    plugins.unload_all()


def test_the_zoo_is_complete():
    assert sorted(p.stem for p in ZOO.glob("m*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("mutant", sorted(EXPECTED))
def test_check_flags_each_mutant_on_its_program(mutant, capsys):
    program = str(ZOO / "programs" / f"{mutant}.py")
    assert main(["check", program]) == 0, capsys.readouterr().out
    assert "ok (as expected)" in capsys.readouterr().out
    rc = main(["check", "--plugin", str(ZOO / f"{mutant}.py"), program])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert f": {EXPECTED[mutant]} (CONTRADICTS expect: ok)" in out, out


def _cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aliasfuzz.cli", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_a_broken_plugin_exits_2_before_any_work(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def install(api):\n    raise RuntimeError('boom')\n")
    r = _cli("run", "--plugin", str(bad), "--programs", "1", "--state", "st", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == [f"aliasfuzz: error: plugin {bad} failed to load: RuntimeError: boom"]
    assert not (tmp_path / "st").exists()  # no campaign was started


def test_a_plugin_is_loaded_in_every_worker(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    plugin = tmp_path / "marker.py"
    plugin.write_text(
        "import os, pathlib\n"
        "def install(api):\n"
        "    d = pathlib.Path(os.environ['MARKS'])\n"
        "    (d / str(os.getpid())).write_text(os.environ.get('ALIASFUZZ_WORKDIR', 'driver'))\n"
    )
    args = ["run", "--plugin", str(plugin), "--workers", "2", "--programs", "6"]
    args += ["--pipelines", "eager", "--no-shrink", "--report", "none", "-q"]
    args += ["--state", "st", "--corpus", "corpus", "--seed", "3"]
    r = _cli(*args, cwd=tmp_path, env={"MARKS": str(marks)})
    assert r.returncode in (0, 1), r.stderr
    where = sorted(p.read_text() for p in marks.iterdir())
    workers = [w for w in where if w != "driver"]
    assert "driver" in where
    assert len({Path(w).parent.name for w in workers}) == 2, where  # w0 and w1


@pytest.mark.parametrize("command", ["check", "replay"])
def test_check_and_replay_refuse_a_broken_plugin_with_exit_2(command, tmp_path, capsys):
    bad = tmp_path / "broken.py"
    bad.write_text("raise ValueError('nope')\n")
    target = ZOO / "programs" / "m7_fx_later_uses.py" if command == "check" else tmp_path
    assert main([command, "--plugin", str(bad), str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"aliasfuzz: error: plugin {bad} failed to load: ValueError: nope"]
