"""Pass plugins through the CLI, each command in a fresh process: a plugin that fails to
load is one line and exit 2 before any work (``run``, ``check``, ``replay``), and a plugin is
loaded in every campaign worker. The mutant zoo itself (``bench/mutants``) is checked in
``test_check_fresh_process.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aliasfuzz import plugins
from tests.common.cli import run_cli

ZOO = Path(__file__).resolve().parents[2] / "bench" / "mutants"


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(plugins.ENV, raising=False)  # the children inherit the environment


def test_a_broken_plugin_exits_2_before_any_work(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def install(api):\n    raise RuntimeError('boom')\n")
    r = run_cli("run", "--plugin", str(bad), "--programs", "1", "--state", "st", cwd=tmp_path)
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
    r = run_cli(*args, cwd=tmp_path, env={"MARKS": str(marks)})
    assert r.returncode in (0, 1), r.stderr
    where = sorted(p.read_text() for p in marks.iterdir())
    workers = [w for w in where if w != "driver"]
    assert "driver" in where
    assert len({Path(w).parent.name for w in workers}) == 2, where  # w0 and w1


@pytest.mark.parametrize("command", ["check", "replay"])
def test_check_and_replay_refuse_a_broken_plugin_with_exit_2(command, tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("raise ValueError('nope')\n")
    target = ZOO / "programs" / "m7_fx_later_uses.py" if command == "check" else tmp_path
    r = run_cli(command, "--plugin", bad, target)
    assert r.returncode == 2, r.stdout + r.stderr
    err = r.stderr.strip().splitlines()
    assert err == [f"aliasfuzz: error: plugin {bad} failed to load: ValueError: nope"]
